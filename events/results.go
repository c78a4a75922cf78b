package events

import (
	"encoding/json"
	"strconv"
	"time"
)

// TypeOutputSchemaUnusable names OutputSchemaUnusable.
const TypeOutputSchemaUnusable = "output_schema_unusable"

// OutputSchemaUnusable says a tool declared an output schema the runtime
// cannot compile (invalid, or with a $ref to a document outside it, which
// the runtime never fetches), so the tool's structured results reach the
// host unchecked. It comes once per tool and schema: a relisting with the
// same schema says nothing again.
type OutputSchemaUnusable struct {
	Header
	// Tool is the tool's registry name (as in ToolsChanged; bounded, see
	// adapter.ToolName), not its name on the server, which is as long as
	// the server likes.
	Tool string
	// Error says what is wrong with the schema, scrubbed of secrets and
	// bounded (redact.MaxErrorBytes).
	Error string
}

// Type implements Event.
func (OutputSchemaUnusable) Type() string { return TypeOutputSchemaUnusable }

func (e OutputSchemaUnusable) String() string {
	return withError(e.prefix()+"output schema of tool "+strconv.Quote(e.Tool)+" unusable; its results go unchecked", e.Error)
}

// MarshalJSON implements json.Marshaler.
func (e OutputSchemaUnusable) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		wireHeader
		Tool  string `json:"tool"`
		Error string `json:"error"`
	}{e.wire(TypeOutputSchemaUnusable), e.Tool, e.Error})
}

func (e OutputSchemaUnusable) stamp(seq uint64, t time.Time) Event { e.Seq, e.Time = seq, t; return e }
