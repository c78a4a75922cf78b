package binding

import (
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/openprogram/mcpvisor/adapter"
	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/exampleserver"
	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/tools"
)

// planted is a secret of the server's config that its result tools echo.
const planted = "sk-results-PLANTED-5e1f"

// resultTools binds the example server's result tools (in memory) and
// returns the entries by original name and the events the binding emitted.
func resultTools(t *testing.T) (map[string]tools.Tool, *Binding, func() []events.Event) {
	t.Helper()
	conn := dialServer(t, exampleserver.NewServer(exampleserver.Options{ResultTools: true, Stderr: io.Discard}),
		map[string]string{"API_KEY": planted})
	var mu sync.Mutex
	var got []events.Event
	b := New("srv", slog.New(slog.DiscardHandler)).WithEvents(func(e events.Event) { mu.Lock(); got = append(got, e); mu.Unlock() })
	b.Publish(conn)
	byName := map[string]tools.Tool{}
	for _, tool := range b.Tools(conn, conn.Tools()) {
		byName[tool.OriginalName] = tool
	}
	return byName, b, func() []events.Event { mu.Lock(); defer mu.Unlock(); return append([]events.Event(nil), got...) }
}

func call(t *testing.T, tool tools.Tool, args any) tools.Result {
	t.Helper()
	res, err := tool.Execute(t.Context(), args)
	if err != nil {
		t.Fatalf("%s: %v", tool.OriginalName, err)
	}
	return res
}

// A structured result that matches the output schema arrives as JSON; one
// that breaks it, or that is missing, is a tool error the model can read,
// naming what did not match, with no structured content; an isError
// result is passed on unchecked.
func TestStructuredResultsChecked(t *testing.T) {
	byName, _, _ := resultTools(t)

	ok := call(t, byName["structured"], map[string]any{"text": "hi"})
	// Byte for byte as sent (the tap kept it): key order and a big id.
	if want := `{"text":"hi","n":1,"id":` + exampleserver.StructuredID + `}`; ok.IsError || string(ok.StructuredContent) != want {
		t.Errorf("structured = %+v (structured %s), want exactly %s", ok, ok.StructuredContent, want)
	}

	broken := call(t, byName["structured_broken"], map[string]any{"text": "hi"})
	if !broken.IsError || broken.Details["is_error"] != true || broken.Details[adapter.DetailOutputSchemaMismatch] != true || broken.StructuredContent != nil || len(broken.Content) != 2 {
		t.Fatalf("structured_broken = %+v (structured %s), want a tool error with no structured content", broken, broken.StructuredContent)
	}
	if msg := broken.Content[0].Text; !strings.Contains(msg, "does not match its output schema") || !strings.Contains(msg, "integer") {
		t.Errorf("mismatch message = %q, want it to say the schema wants an integer", msg)
	}
	if broken.Content[1].Text != `{"text":"hi","n":"hi","id":`+exampleserver.StructuredID+`}` {
		t.Errorf("the server's own block = %+v, want it kept after the message", broken.Content[1])
	}

	missing := call(t, byName["structured_missing"], map[string]any{})
	if !missing.IsError || !strings.Contains(missing.Content[0].Text, "no structured content") {
		t.Errorf("structured_missing = %+v, want a tool error saying no structured content came", missing)
	}

	failing := call(t, byName["structured_failing"], map[string]any{})
	if !failing.IsError || len(failing.Content) != 1 || !testutil.JSONEqual(string(failing.StructuredContent), `{"n":"x"}`) {
		t.Errorf("structured_failing = %+v (structured %s), want the server's error unchanged and unchecked", failing, failing.StructuredContent)
	}
}

// A schema with a remote $ref is never fetched: the tool's results pass
// unchecked, and one event says so, not again at a relisting with the
// same schema.
func TestUnusableOutputSchemaWarnsOnce(t *testing.T) {
	byName, b, emitted := resultTools(t)
	res := call(t, byName["remote_ref"], map[string]any{})
	if res.IsError || !testutil.JSONEqual(string(res.StructuredContent), `{"x":1}`) {
		t.Errorf("remote_ref = %+v (structured %s), want it passed unchecked", res, res.StructuredContent)
	}
	conn := b.Current()
	b.Tools(conn, conn.Tools()) // a relisting, same schemas
	var unusable []events.OutputSchemaUnusable
	for _, e := range emitted() {
		if u, ok := e.(events.OutputSchemaUnusable); ok {
			unusable = append(unusable, u)
		}
	}
	if len(unusable) != 1 || unusable[0].Tool != "srv__remote_ref" || !strings.Contains(unusable[0].Error, "http://127.0.0.1:9/schema.json") {
		t.Fatalf("OutputSchemaUnusable events = %+v, want one for remote_ref naming the $ref", unusable)
	}
}

// The structured content, the mismatch message and the resource link
// details echo the config's secret: none shows it. (The server's own text
// blocks are its answer to the model and pass as they are, as ever.)
func TestResultFieldsScrubbed(t *testing.T) {
	byName, _, _ := resultTools(t)
	args := map[string]any{"text": planted}
	for name, res := range map[string]tools.Result{
		"structured":        call(t, byName["structured"], args),
		"structured_broken": call(t, byName["structured_broken"], args),
		"annotated":         call(t, byName["annotated"], args),
	} {
		fields, _ := json.Marshal(map[string]any{"structured": res.StructuredContent, "details": res.Details})
		if name == "structured_broken" {
			fields, _ = json.Marshal(map[string]any{"message": res.Content[0].Text})
		}
		if strings.Contains(string(fields), planted) || !strings.Contains(string(fields), "[redacted]") {
			t.Errorf("%s: %s, want the secret scrubbed", name, fields)
		}
	}
}

// The event of an unusable schema names the tool by its registry name and
// carries the compile error scrubbed and bounded, although the server
// chose the schema (and may have echoed the secret of its config into a
// $ref).
func TestUnusableOutputSchemaEventIsScrubbed(t *testing.T) {
	_, b, emitted := resultTools(t)
	schema := `{"$ref":"http://127.0.0.1:9/` + planted + `/` + strings.Repeat("x", 8<<10) + `"}`
	b.checkFor(b.Current(), "srv__echo", "echo", json.RawMessage(schema), map[string]*outputCheck{})
	var got *events.OutputSchemaUnusable
	for _, e := range emitted() {
		if u, ok := e.(events.OutputSchemaUnusable); ok && u.Tool == "srv__echo" {
			got = &u
		}
	}
	if got == nil || strings.Contains(got.Error, planted) || len(got.Error) > 4200 {
		t.Fatalf("event = %+v, want one for srv__echo, scrubbed and bounded", got)
	}
}
