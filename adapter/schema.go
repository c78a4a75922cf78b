package adapter

import (
	"encoding/json"
	"fmt"
)

// emptyObjectSchema is the schema of a tool that takes no arguments. It is a
// constant so every call returns a fresh slice that callers may modify.
const emptyObjectSchema = `{"type":"object"}`

// SchemaJSON returns a tool's input schema (mcp.Tool.InputSchema) as JSON for
// the host's tool registry.
//
// The SDK client decodes the schema into a map[string]any; SchemaJSON
// marshals it back. A json.RawMessage is accepted too and comes back
// compacted. A nil schema, or one that marshals to JSON null, gives
// {"type":"object"}: a tool without a schema takes no arguments, and model
// APIs reject a null parameter schema. The schema is otherwise passed through
// unchanged, not validated.
func SchemaJSON(schema any) (json.RawMessage, error) {
	if schema == nil {
		return json.RawMessage(emptyObjectSchema), nil
	}
	b, err := json.Marshal(schema)
	if err != nil {
		return nil, fmt.Errorf("marshaling input schema: %w", err)
	}
	if string(b) == "null" {
		return json.RawMessage(emptyObjectSchema), nil
	}
	return b, nil
}
