package mcpconn

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestReadableContent(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"known only, untouched", `{"content":[{"type":"text","text":"a"},{"type":"image","data":"AA==","mimeType":"image/png"}]}`, ``},
		{"unknown block becomes text", `{"content":[{"type":"text","text":"a"},{"type":"hologram","data":"x"}],"isError":false}`,
			`{"content":[{"type":"text","text":"a"},{"text":"[unsupported content: hologram]","type":"text"}],"isError":false}`},
		{"type key in structured content only", `{"content":[{"type":"text","text":"a"}],"structuredContent":{"type":"weird"}}`, ``},
		{"spaces around the colon", `{"content":[{"type" : "video"}]}`, `{"content":[{"text":"[unsupported content: video]","type":"text"}]}`},
		{"malformed stays for the SDK to report", `{"content":[{"type":"video"}`, ``},
		{"escaped type inside text", `{"content":[{"type":"text","text":"{\"type\":\"video\"}"}]}`, ``},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want := tc.want
			if want == "" {
				want = tc.in
			}
			got := string(readableContent(json.RawMessage(tc.in)))
			if !jsonEqual(got, want) {
				t.Fatalf("got  %s\nwant %s", got, want)
			}
		})
	}
}

func TestOnlyKnownTypes(t *testing.T) {
	for in, want := range map[string]bool{
		`{"content":[{"type":"text"},{"type":"resource_link"},{"type":"audio"},{"type":"resource"}]}`: true,
		`{"content":[{"type":"hologram"}]}`: false,
		`{"content":[{"type":  "text" }]}`:  true,
		`{"content":[{"type":5}]}`:          false,
		`{"content":[]}`:                    true,
	} {
		if got := onlyKnownTypes([]byte(in)); got != want {
			t.Errorf("onlyKnownTypes(%s) = %v, want %v", in, got, want)
		}
	}
}

func jsonEqual(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return a == b
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return string(ja) == string(jb)
}

// nopConn is a connection that swallows every message.
type nopConn struct{ mcp.Connection }

func (nopConn) Write(context.Context, jsonrpc.Message) error { return nil }

// A tools/call the caller gave up on (timeout, cancel) is never answered
// by a server that honours notifications/cancelled: its pending entry goes
// when the call returns (CallToolJSON forgets its slot), not with an
// answer that never comes.
func TestTapForgetsAbandonedCalls(t *testing.T) {
	w := newWireTap()
	w.Connection = nopConn{}
	for i := range 1000 {
		id, _ := jsonrpc.MakeID(float64(i))
		slot := &structuredSlot{}
		ctx := context.WithValue(context.Background(), structuredSlotKey{}, slot)
		_ = w.Write(ctx, &jsonrpc.Request{ID: id, Method: "tools/call"})
		if i%2 == 0 { // an MRTR retry shares the call's slot
			retry, _ := jsonrpc.MakeID(float64(i + 100000))
			_ = w.Write(ctx, &jsonrpc.Request{ID: retry, Method: "tools/call"})
		}
		w.forget(slot)
	}
	if n := len(w.pending); n != 0 {
		t.Errorf("%d pending entries held for calls nobody waits for", n)
	}
}

// Each listing's first page (a tools/list without a cursor) replaces the
// tools the tap holds; its later pages add to them.
func TestTapSchemasFollowTheListing(t *testing.T) {
	w := newWireTap()
	w.Connection = nopConn{}
	page := func(name string) json.RawMessage {
		return json.RawMessage(`{"tools":[{"name":"` + name + `","inputSchema":{}}]}`)
	}
	for i := range 100 {
		w.keepSchemas(page(fmt.Sprintf("t%d", i)), true)
	}
	if n := len(w.schemas); n != 1 {
		t.Errorf("the tap holds %d tools after listings of one tool each", n)
	}
	w.keepSchemas(page("second"), false)
	_, first := w.tool("t99")
	_, second := w.tool("second")
	if !first || !second {
		t.Errorf("a later page dropped the first page's tools (t99 %v, second %v)", first, second)
	}
	// Write tells a first page from a later one by the request's cursor.
	for cursor, want := range map[string]bool{`{}`: true, `{"cursor":"c2"}`: false} {
		id, _ := jsonrpc.MakeID(cursor)
		_ = w.Write(context.Background(), &jsonrpc.Request{ID: id, Method: "tools/list", Params: json.RawMessage(cursor)})
		if got := w.pending[id].firstPage; got != want {
			t.Errorf("params %s: first page %v, want %v", cursor, got, want)
		}
	}
}
