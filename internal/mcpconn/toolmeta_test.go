package mcpconn

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/tools"
)

// TestWithMetadataFromTheTap: on stdio the output schema and _meta are the
// bytes sent, and the annotations say exactly which hints were sent.
func TestWithMetadataFromTheTap(t *testing.T) {
	const output = `{"type":"object","properties":{"zeta":{"type":"integer","maximum":12345678901234567890},"alpha":{}}}`
	const meta = `{"ui":{"resourceUri":"ui://x/y"},"b":1,"a":2}`
	w := newWireTap()
	w.keepSchemas(json.RawMessage(`{"tools":[{"name":"t","inputSchema":{"type":"object"},"outputSchema":`+output+
		`,"annotations":{"readOnlyHint":false,"openWorldHint":true},"_meta":`+meta+`},{"name":"bare","inputSchema":{"type":"object"},"annotations":null}]}`), true)
	c := &Conn{tap: w}
	// The SDK's decoded form, which the tap's bytes override.
	decoded := &mcp.Tool{Name: "t", Title: "T", Annotations: &mcp.ToolAnnotations{}, Icons: []mcp.Icon{{Source: "https://x/i.png", Theme: mcp.IconThemeLight}}}
	got := c.WithMetadata(decoded, tools.Tool{Name: "s__t"})
	if string(got.OutputSchema) != output || string(got.Meta) != meta || got.Title != "T" || got.Name != "s__t" {
		t.Errorf("tool = %+v", got)
	}
	a := got.Annotations
	if a == nil || a.ReadOnlyHint == nil || *a.ReadOnlyHint || a.OpenWorldHint == nil || !*a.OpenWorldHint || a.DestructiveHint != nil || a.IdempotentHint != nil {
		t.Errorf("annotations = %+v, want read-only false and open-world true only", a)
	}
	if len(got.Icons) != 1 || got.Icons[0].Src != "https://x/i.png" || got.Icons[0].Theme != "light" {
		t.Errorf("icons = %+v", got.Icons)
	}
	bare := c.WithMetadata(&mcp.Tool{Name: "bare"}, tools.Tool{})
	if bare.Annotations != nil || bare.OutputSchema != nil || bare.Meta != nil || bare.Icons != nil {
		t.Errorf("bare tool = %+v, want no metadata", bare)
	}
}

// TestWithMetadataDecoded: without a tap (HTTP, SSE) pointer hints are
// taken as sent and plain-boolean hints only when true.
func TestWithMetadataDecoded(t *testing.T) {
	no := false
	decoded := &mcp.Tool{Name: "t",
		OutputSchema: map[string]any{"type": "object"},
		Annotations:  &mcp.ToolAnnotations{ReadOnlyHint: false, IdempotentHint: true, DestructiveHint: &no},
		Meta:         mcp.Meta{"k": "v"},
	}
	got := (&Conn{}).WithMetadata(decoded, tools.Tool{})
	a := got.Annotations
	if a == nil || a.ReadOnlyHint != nil || a.IdempotentHint == nil || !*a.IdempotentHint || a.DestructiveHint == nil || *a.DestructiveHint || a.OpenWorldHint != nil {
		t.Errorf("annotations = %+v, want idempotent true and destructive false only", a)
	}
	if a != nil && a.DestructiveHint == decoded.Annotations.DestructiveHint {
		t.Error("the tool shares a pointer with the SDK's list")
	}
	if string(got.OutputSchema) != `{"type":"object"}` || string(got.Meta) != `{"k":"v"}` {
		t.Errorf("output schema %s, meta %s", got.OutputSchema, got.Meta)
	}
	if plain := (&Conn{}).WithMetadata(&mcp.Tool{Name: "p"}, tools.Tool{}); plain.Annotations != nil || plain.OutputSchema != nil || plain.Meta != nil {
		t.Errorf("plain tool = %+v, want no metadata", plain)
	}
}
