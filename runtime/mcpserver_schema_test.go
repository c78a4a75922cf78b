package runtime

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/openprogram/mcpvisor/internal/exampleserver"
)

// remoteRef finds every ref a client could not resolve within the schema.
func TestRemoteRef(t *testing.T) {
	for schema, want := range map[string]string{
		`{"type":"object"}`: "",
		`{"type":"object","properties":{"a":{"$ref":"#/$defs/a"}},"$defs":{"a":{"type":"string"}}}`:                          "",
		`{"type":"object","properties":{"a":{"$ref":"#"}}}`:                                                                  "",
		`{"type":"object","properties":{"a":{"$ref":"#name"}}}`:                                                              "",
		`{"$id":"https://x.example/s.json","type":"object","properties":{"a":{"$ref":"https://x.example/s.json#/$defs/a"}}}`: "",
		exampleserver.RemoteRefSchema:                                                                    "http://127.0.0.1:9/schema.json",
		`{"type":"object","properties":{"a":{"$ref":"other.json#/a"}}}`:                                  "other.json#/a",
		`{"type":"object","properties":{"a":{"anyOf":[{"type":"null"},{"$dynamicRef":"https://y/z"}]}}}`: "https://y/z",
		`{"type":"object","properties":{"ref":{"type":"string"}}}`:                                       "",
	} {
		if got := remoteRef(json.RawMessage(schema)); got != want {
			t.Errorf("remoteRef(%s) = %q, want %q", schema, got, want)
		}
	}
}

// The gateway serves a tool whose output schema refers to another
// document without that schema (a client could not resolve it; the
// TypeScript SDK would refuse the whole list), logs it once however often
// the tools are synced, and keeps the other tools' schemas; the tool is
// still callable.
func TestGatewayDropsRemoteOutputSchema(t *testing.T) {
	rt := start(t, Options{}, exampleServer("ex", "-result-tools"))
	rt.waitReady(t, "ex")
	g := connectGateway(t, rt, MCPServerOptions{})
	if tool := g.tool(t, "ex__remote_ref"); tool.OutputSchema != nil {
		t.Errorf("remote_ref served with its output schema %v", tool.OutputSchema)
	}
	if tool := g.tool(t, "ex__structured"); tool.OutputSchema == nil {
		t.Error("structured served without its output schema")
	}
	if res := g.call(t, "ex__remote_ref", nil); res.IsError {
		t.Errorf("remote_ref through the gateway = %+v", res)
	}
	// More syncs: another server's tools come.
	if _, err := rt.AddServer(context.Background(), exampleServer("b")); err != nil {
		t.Fatal(err)
	}
	g.awaitTools(t, "holding b__echo", func(names []string) bool { return slices.Contains(names, "b__echo") })
	if n := strings.Count(rt.logs.String(), "serving a tool without its output schema"); n != 1 {
		t.Errorf("the dropped schema was logged %d times, want once:\n%s", n, rt.logs.String())
	}
}
