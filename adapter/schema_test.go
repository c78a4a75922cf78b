package adapter_test

import (
	"encoding/json"
	"testing"

	"github.com/openprogram/mcpvisor/adapter"
)

func TestSchemaJSON(t *testing.T) {
	tests := []struct {
		name   string
		schema any
		want   string
	}{
		{"nil", nil, `{"type":"object"}`},
		{"typed nil map", map[string]any(nil), `{"type":"object"}`},
		{"raw null", json.RawMessage(`null`), `{"type":"object"}`},
		{
			"decoded by the client",
			map[string]any{
				"type":       "object",
				"properties": map[string]any{"path": map[string]any{"type": "string"}},
				"required":   []any{"path"},
			},
			`{"properties":{"path":{"type":"string"}},"required":["path"],"type":"object"}`,
		},
		{"raw message compacted", json.RawMessage("{ \"type\" :\n \"object\" }"), `{"type":"object"}`},
		{"empty object kept", map[string]any{}, `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := adapter.SchemaJSON(tt.schema)
			if err != nil {
				t.Fatalf("SchemaJSON: %v", err)
			}
			if string(got) != tt.want {
				t.Errorf("SchemaJSON = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestSchemaJSONError(t *testing.T) {
	if got, err := adapter.SchemaJSON(map[string]any{"bad": make(chan int)}); err == nil {
		t.Fatalf("SchemaJSON(chan) = %s, want error", got)
	}
}

// The default schema must not be shared: a caller that edits the slice it
// got must not change what the next caller gets.
func TestSchemaJSONDefaultNotShared(t *testing.T) {
	first, _ := adapter.SchemaJSON(nil)
	for i := range first {
		first[i] = 'X'
	}
	second, _ := adapter.SchemaJSON(nil)
	if string(second) != `{"type":"object"}` {
		t.Fatalf("second SchemaJSON(nil) = %s after editing the first", second)
	}
}
