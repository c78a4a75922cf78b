package mcpconn

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// CallToolJSON is CallTool that also returns the result's structuredContent
// as the server sent it, where the wire tap sees the bytes (stdio): the
// SDK decodes it into an `any`, and re-encoding that reorders keys and
// rounds integers beyond 2^53. It is nil on HTTP and SSE and when the
// result has none; the caller then re-encodes the SDK's value. The cost
// on stdio is none per call (the slot is part of the call's toolCall),
// and a scan of the result only when it has structured content.
func (c *Conn) CallToolJSON(ctx context.Context, name string, args any) (*mcp.CallToolResult, json.RawMessage, error) {
	return c.callTool(ctx, name, args, true)
}

// structuredSlotKey carries a call's structuredSlot from CallToolJSON to
// the wire tap, which sees the request in Write with the caller's context.
type structuredSlotKey struct{}

// structuredSlot receives the structuredContent of a tools/call answer.
// The tap sets it on the session's reading goroutine; the caller reads it
// once the SDK handed over the result. It also records the ids the call's
// requests went out under (several, when the SDK retried it for input), so
// that the tap can forget them when the call returns unanswered.
type structuredSlot struct {
	raw   atomic.Pointer[json.RawMessage]
	mu    sync.Mutex
	ids   []jsonrpc.ID
	first [1]jsonrpc.ID // ids' first backing array: no allocation for one id
}

// sent records that the call sent a request under id.
func (s *structuredSlot) sent(id jsonrpc.ID) {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.ids = append(s.ids, id)
	s.mu.Unlock()
}

var structuredKey = []byte(`"structuredContent"`)

// keep stores result's structuredContent, if it has one. A result without
// the key costs one byte scan.
func (s *structuredSlot) keep(result json.RawMessage) {
	if s == nil {
		return
	}
	if !bytes.Contains(result, structuredKey) {
		s.raw.Store(nil)
		return
	}
	var r struct {
		StructuredContent json.RawMessage `json:"structuredContent"`
	}
	if json.Unmarshal(result, &r) != nil || nonNull(r.StructuredContent) == nil {
		s.raw.Store(nil)
		return
	}
	s.raw.Store(&r.StructuredContent) // Unmarshal copied the bytes
}

// Scrub is text with every secret of this connection replaced, for
// server data the runtime passes on in fields of its own (structured
// results, resource link details).
func (c *Conn) Scrub(text string) string { return c.scrub.String(text) }

// ScrubError is Scrub for a text that quotes server data in an error the
// runtime writes (a schema or validation error): scrubbed, then bounded
// like every error that leaves a connection.
func (c *Conn) ScrubError(text string) string { return c.scrub.ErrorString(text) }

// ScrubJSON is Scrub for JSON that leaves as JSON (see
// redact.Scrubber.JSON): the result is valid JSON whenever raw was.
func (c *Conn) ScrubJSON(raw json.RawMessage) json.RawMessage { return c.scrub.JSON(raw) }
