package binding

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A listing checks an output schema but keeps no compiled form: the first
// result checked compiles it, and the check still catches a mismatch.
func TestOutputSchemaCompiledAtFirstCheck(t *testing.T) {
	_, b, _ := resultTools(t)
	conn := b.Current()
	c := b.checkFor(conn, "srv__t", "t", json.RawMessage(`{"type":"object","required":["n"]}`), map[string]*outputCheck{})
	if c.unusable || c.compiled != nil {
		t.Fatalf("after the listing: unusable %v, compiled %v; want usable and not compiled yet", c.unusable, c.compiled != nil)
	}
	res := result(conn, c, &mcp.CallToolResult{StructuredContent: map[string]any{"m": 1}}, nil)
	if !res.IsError || !strings.Contains(res.Content[0].Text, "does not match") {
		t.Fatalf("a result without n: %+v, want a mismatch", res.Content)
	}
	if c.compiled == nil {
		t.Fatal("not compiled after the first check")
	}
	if res := result(conn, c, &mcp.CallToolResult{StructuredContent: map[string]any{"n": 1}}, nil); res.IsError {
		t.Fatalf("a result with n: %+v, want it passed", res.Content)
	}
}
