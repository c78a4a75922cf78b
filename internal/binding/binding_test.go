package binding

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/internal/mcpconn"
	"github.com/openprogram/mcpvisor/tools"
)

// connTo dials an in-memory server whose one tool, who, answers with
// answer; the server also declares prompts, so the prompt tools show.
func connTo(t *testing.T, answer string) *mcpconn.Conn {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "b", Version: "1"}, &mcp.ServerOptions{HasPrompts: true})
	srv.AddTool(&mcp.Tool{Name: "who.am.i", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: answer}}}, nil
		})
	return dialServer(t, srv, nil)
}

// dialServer connects to srv in memory, as a local server whose config has
// env (whose values the connection's scrubber learns).
func dialServer(t *testing.T, srv *mcp.Server, env map[string]string) *mcpconn.Conn {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatalf("server connect: %v", err)
	}
	t.Cleanup(func() { ss.Close() })
	conn, err := mcpconn.Dial(t.Context(), mcpconn.Options{
		Server:    config.Server{Name: "srv", Type: config.TypeLocal, Command: []string{"unused"}, Env: env, Enabled: true},
		Transport: ct, Grace: 100 * time.Millisecond, Client: &mcp.Implementation{Name: "binding-test"},
	})
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// TestCallsRunOnTheCurrentConnection: an entry built from one connection
// calls whatever connection is published when the call starts (a tool the
// host kept across a restart still works), and fails at once with
// ErrNotReady while none is.
func TestCallsRunOnTheCurrentConnection(t *testing.T) {
	first, second := connTo(t, "first"), connTo(t, "second")
	b := New("srv", slog.New(slog.DiscardHandler))
	list := b.Tools(first, first.Tools())
	names := map[string]tools.Tool{}
	for _, tool := range list {
		names[tool.Name] = tool
	}
	for _, want := range []string{"srv__who_am_i", "srv__list_prompts", "srv__get_prompt"} {
		if _, ok := names[want]; !ok {
			t.Fatalf("Tools = %v, want %s among them", list, want)
		}
	}
	tool := names["srv__who_am_i"]
	call := func() (string, error) {
		res, err := tool.Execute(t.Context(), map[string]any{})
		if err != nil {
			return "", err
		}
		return res.Content[0].Text, nil
	}
	if _, err := call(); !errors.Is(err, tools.ErrNotReady) {
		t.Fatalf("call before Publish = %v, want ErrNotReady", err)
	}
	for _, conn := range []*mcpconn.Conn{first, second} {
		b.Publish(conn)
		want := map[*mcpconn.Conn]string{first: "first", second: "second"}[conn]
		if got, err := call(); err != nil || got != want {
			t.Fatalf("call = %q, %v; want %q from the published connection", got, err, want)
		}
	}
	b.Withdraw()
	if _, err := call(); !errors.Is(err, tools.ErrNotReady) {
		t.Fatalf("call after Withdraw = %v, want ErrNotReady", err)
	}
	if b.Current() != nil {
		t.Fatal("Current after Withdraw is not nil")
	}
}
