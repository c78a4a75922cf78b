package binding

import (
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/adapter"
	"github.com/openprogram/mcpvisor/events"
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

// A schema that compiled at the listing but fails at its first use (it
// cannot, short of a bug: injected here) makes the check unusable and
// emits OutputSchemaUnusable once, rather than leaving the tool's results
// unchecked without a word.
func TestLazyCompileFailureIsReported(t *testing.T) {
	_, b, emitted := resultTools(t)
	conn := b.Current()
	c := &outputCheck{schema: `{"type":`} // as if the listing found it usable
	unusable := func() (n int) {
		for _, e := range emitted() {
			if u, ok := e.(events.OutputSchemaUnusable); ok && u.Tool == adapter.ToolName(b.server, "t") && u.Error != "" {
				n++
			}
		}
		return n
	}
	b.compileFirst(conn, "t", c)
	if !c.unusable || c.compiled != nil {
		t.Fatalf("after a failed compile: unusable %v, compiled %v; want unusable", c.unusable, c.compiled != nil)
	}
	if n := unusable(); n != 1 {
		t.Fatalf("%d OutputSchemaUnusable events, want 1", n)
	}
	b.compileFirst(conn, "t", c)
	if res := result(conn, c, &mcp.CallToolResult{StructuredContent: map[string]any{"n": 1}}, nil); res.IsError {
		t.Fatalf("a result of an unusable check: %+v, want it passed as the listing's unusable ones", res.Content)
	}
	if n := unusable(); n != 1 {
		t.Fatalf("%d OutputSchemaUnusable events after a second use, want still 1", n)
	}
}

// A panic while compiling (jsonschema-go on a schema the bounds missed)
// is an error, bounded, not a crash of the call.
func TestCompileSafelyRecoversAPanic(t *testing.T) {
	cs, err := compileSafely(func(json.RawMessage) (*compiledSchema, error) { panic(strings.Repeat("boom", 1000)) }, nil)
	if cs != nil || err == nil || !strings.Contains(err.Error(), "panicked: boom") || len(err.Error()) > 300 {
		t.Fatalf("compileSafely = %v, %v; want a bounded error naming the panic", cs, err)
	}
}

// A panic while compiling is reported with its stack in the log (a bug of
// ours in the bounded checkers must not pass for a server's unusable
// schema) and its bounded text in the event, the stack not in it.
func TestCompilePanicLogsItsStack(t *testing.T) {
	_, b, emitted := resultTools(t)
	logs := &strings.Builder{}
	b.logger = slog.New(slog.NewTextHandler(logs, nil))
	before := len(emitted()) // the listing's own
	_, err := compileSafely(func(json.RawMessage) (*compiledSchema, error) { panic("boom") }, nil)
	b.reportUnusable(b.Current(), "srv__t", err)
	if !strings.Contains(logs.String(), "compiling an output schema panicked") || !strings.Contains(logs.String(), "TestCompilePanicLogsItsStack") {
		t.Fatalf("log %q: want the panic with a stack naming this test", logs.String())
	}
	var got []string
	for _, e := range emitted()[before:] {
		if u, ok := e.(events.OutputSchemaUnusable); ok {
			got = append(got, u.Error)
		}
	}
	if len(got) != 1 || !strings.Contains(got[0], "panicked: boom") || strings.Contains(got[0], "goroutine") {
		t.Fatalf("OutputSchemaUnusable errors %q: want one with the panic's text and no stack", got)
	}
}
