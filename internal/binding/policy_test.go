package binding

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/adapter"
	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/internal/mcpconn"
	"github.com/openprogram/mcpvisor/tools"
)

// connWithTools dials an in-memory server with a tool of each name (each
// answers its own name) and the resources capability when resources.
func connWithTools(t *testing.T, resources bool, names ...string) *mcpconn.Conn {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "p", Version: "1"}, &mcp.ServerOptions{HasResources: resources})
	for _, name := range names {
		srv.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name}}}, nil
			})
	}
	return dialServer(t, srv, nil)
}

func withFilter(f config.ToolFilter) *Policy {
	return PolicyOf(config.Server{Tools: f})
}

func namesOf(list []tools.Tool) map[string]tools.Tool {
	out := map[string]tools.Tool{}
	for _, tool := range list {
		out[tool.Name] = tool
	}
	return out
}

// A server may name a tool "fs/delete_file" (the go-sdk client does not
// check names; the registry name is srv__fs_delete_file): deny ["*"] and
// ["*delete*"] leave it out and make a kept tool value of it fail.
func TestFilterGlobsMatchNamesWithSlash(t *testing.T) {
	conn := connWithTools(t, false, "fs/delete_file", "fs/read_file")
	b := New("srv", slog.New(slog.DiscardHandler))
	b.Publish(conn)
	kept := namesOf(b.Tools(conn, conn.Tools()))["srv__fs_delete_file"]
	if kept.Name == "" {
		t.Fatal("no srv__fs_delete_file without a filter")
	}
	for _, tc := range []struct {
		deny []string
		want []string
	}{
		{[]string{"*"}, nil},
		{[]string{"*delete*"}, []string{"srv__fs_read_file"}},
		{[]string{"fs/delete_*"}, []string{"srv__fs_read_file"}},
	} {
		b.SetPolicy(withFilter(config.ToolFilter{Deny: tc.deny}))
		got := namesOf(b.Tools(conn, conn.Tools()))
		if len(got) != len(tc.want) || b.Filtered() != 2-len(tc.want) {
			t.Errorf("deny %q: registered %v, %d filtered; want %v", tc.deny, slices.Sorted(maps.Keys(got)), b.Filtered(), tc.want)
		}
		for _, name := range tc.want {
			if _, ok := got[name]; !ok {
				t.Errorf("deny %q: %s not registered", tc.deny, name)
			}
		}
		if _, err := kept.Execute(t.Context(), map[string]any{}); !errors.Is(err, tools.ErrUnknownTool) {
			t.Errorf("deny %q: a kept srv__fs_delete_file = %v, want ErrUnknownTool", tc.deny, err)
		}
	}
}

// Under a filter, a tool whose name is past the specification's 128
// bytes is left out (and counted), whatever the globs say.
func TestFilterLeavesOutLongNames(t *testing.T) {
	long := strings.Repeat("n", config.MaxFilteredNameBytes+1)
	conn := connWithTools(t, false, long, "short")
	b := New("srv", slog.New(slog.DiscardHandler))
	if got := b.Tools(conn, conn.Tools()); len(got) != 2 {
		t.Fatalf("without a filter %d tools registered, want both", len(got))
	}
	b.SetPolicy(withFilter(config.ToolFilter{Deny: []string{"*secret*"}}))
	got := namesOf(b.Tools(conn, conn.Tools()))
	if _, ok := got["srv__short"]; len(got) != 1 || !ok || b.Filtered() != 1 {
		t.Errorf("registered %v, %d filtered; want srv__short alone, 1 filtered", slices.Sorted(maps.Keys(got)), b.Filtered())
	}
}

// A tool of the server named like a resource tool of the runtime, both
// denied, counts once: the server listed one tool.
func TestFilteredCountsANameClashOnce(t *testing.T) {
	conn := connWithTools(t, true, "read_resource", "other")
	b := New("srv", slog.New(slog.DiscardHandler))
	b.SetPolicy(withFilter(config.ToolFilter{Deny: []string{"read_resource"}}))
	got := namesOf(b.Tools(conn, conn.Tools()))
	if _, ok := got["srv__list_resources"]; len(got) != 2 || !ok || b.Filtered() != 1 {
		t.Errorf("registered %v, %d filtered; want other and list_resources, 1 filtered", slices.Sorted(maps.Keys(got)), b.Filtered())
	}
	b.SetPolicy(withFilter(config.ToolFilter{Deny: []string{"*resource*"}}))
	b.Tools(conn, conn.Tools())
	if b.Filtered() != 2 { // the server's read_resource, the runtime's list_resources
		t.Errorf("%d filtered, want 2", b.Filtered())
	}
}

// Bindings start on the default policy, each its own.
func TestNewBindingHasTheDefaultPolicy(t *testing.T) {
	a, b := New("a", slog.New(slog.DiscardHandler)), New("b", slog.New(slog.DiscardHandler))
	text, media := config.Server{}.OutputCaps()
	if p := a.currentPolicy(); p == nil || p.MaxText != text || p.MaxMedia != media || !p.Filter.IsZero() {
		t.Fatalf("default policy = %+v", p)
	}
	if a.currentPolicy() == b.currentPolicy() {
		t.Error("two bindings share one policy value")
	}
}

// A read of several contents over the text cap names the resource the
// cut fell in.
func TestReadResourceCutNamesTheResource(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "r", Version: "1"}, nil)
	srv.AddResource(&mcp.Resource{URI: "file:///logs", Name: "logs"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
			{URI: "file:///logs/a.log", Text: strings.Repeat("a", 600)},
			{URI: "file:///logs/b.log", Text: strings.Repeat("b", 600)},
		}}, nil
	})
	conn := dialServer(t, srv, nil)
	b := New("r", slog.New(slog.DiscardHandler))
	b.Publish(conn)
	p := &Policy{MaxText: 1024, MaxMedia: config.NoCap}
	b.SetPolicy(p)
	res, err := b.metaExecutor(resourceTools[1], p)(t.Context(), map[string]any{"uri": "file:///logs"})
	if err != nil || len(res.Content) != 3 {
		t.Fatalf("read = %+v, %v; want two blocks and a notice", res, err)
	}
	if n := res.Content[2].Text; !strings.Contains(n, "file:///logs/b.log") || strings.Contains(n, "a.log") {
		t.Errorf("notice %q does not name b.log alone", n)
	}
}

// Many tiny blocks pass the byte caps; past 1024 blocks the rest are
// dropped, said in a notice and counted.
func TestCapResultBoundsTheBlocks(t *testing.T) {
	res := tools.Result{}
	for range 200_000 {
		res.Content = append(res.Content, tools.Content{Type: tools.ContentText, Text: "x"})
	}
	res.Content = append(res.Content, tools.Content{Type: tools.ContentImage, Data: []byte{1, 2}})
	text, media := config.Server{}.OutputCaps()
	capResult(&res, text, media)
	if len(res.Content) != maxResultBlocks+1 {
		t.Fatalf("%d blocks, want %d and a notice", len(res.Content), maxResultBlocks)
	}
	tr, _ := res.Details[adapter.DetailTruncated].(tools.Truncation)
	want := tools.Truncation{TextBytes: 200_000, TextShown: maxResultBlocks, MaxOutputBytes: text,
		MediaBytes: 2, MediaShown: 0, MaxMediaBytes: media, BlocksDropped: 200_001 - maxResultBlocks}
	if tr != want {
		t.Errorf("truncation %+v, want %+v", tr, want)
	}
	if n := res.Content[maxResultBlocks].Text; !strings.Contains(n, "198977 block(s) past the first 1024") {
		t.Errorf("notice %q", n)
	}
}
