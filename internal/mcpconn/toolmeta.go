package mcpconn

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/tools"
)

// WithMetadata returns tool with t's title, annotations, output schema,
// icons and _meta set, and the MCP Apps fields read from that _meta (see
// withAppMeta). On stdio the schema, annotations and _meta come
// from the bytes the server sent; on HTTP and SSE from the SDK's decoded
// form (see tools.Annotations for what that loses). It runs once per tool
// list, never per call.
//
// A server may echo a secret of its config into any of these (a title, a
// description in the schema, a URL in _meta), and they leave through the
// tool listings: the title and the annotations' title are scrubbed with
// the connection's scrubber, the schema and _meta as JSON
// (redact.Scrubber.JSON: still valid JSON, or the quoted marker; a schema
// left as the marker is then unusable, its results unchecked). Icons are
// Icons'.
func (c *Conn) WithMetadata(t *mcp.Tool, tool tools.Tool) tools.Tool {
	tool = c.withMetadata(t, tool)
	tool.Title = c.Scrub(tool.Title)
	if tool.Annotations != nil {
		tool.Annotations.Title = c.Scrub(tool.Annotations.Title)
	}
	tool.OutputSchema, tool.Meta = c.ScrubJSON(tool.OutputSchema), c.ScrubJSON(tool.Meta)
	return withAppMeta(tool.Meta, tool)
}

// withMetadata is WithMetadata before scrubbing.
func (c *Conn) withMetadata(t *mcp.Tool, tool tools.Tool) tools.Tool {
	tool.Title = t.Title
	tool.Icons = c.Icons(t.Icons)
	raw, tapped := c.tap.tool(t.Name)
	if tapped {
		tool.OutputSchema = nonNull(raw.OutputSchema)
		tool.Annotations = tappedAnnotations(raw.Annotations)
		tool.Meta = nonNull(raw.Meta)
		return tool
	}
	if t.OutputSchema != nil {
		tool.OutputSchema = marshaled(t.OutputSchema)
	}
	if len(t.Meta) > 0 {
		tool.Meta = marshaled(t.Meta)
	}
	if a := t.Annotations; a != nil {
		tool.Annotations = &tools.Annotations{Title: a.Title, DestructiveHint: copied(a.DestructiveHint), OpenWorldHint: copied(a.OpenWorldHint)}
		// Plain booleans in the SDK: only true proves the server sent it.
		sent := true
		if a.ReadOnlyHint {
			tool.Annotations.ReadOnlyHint = &sent
		}
		if a.IdempotentHint {
			tool.Annotations.IdempotentHint = &sent
		}
	}
	return tool
}

// tappedAnnotations decodes annotations as sent: a pointer per hint says
// whether the server sent it.
func tappedAnnotations(raw json.RawMessage) *tools.Annotations {
	if nonNull(raw) == nil {
		return nil
	}
	var a struct {
		Title           string `json:"title"`
		ReadOnlyHint    *bool  `json:"readOnlyHint"`
		DestructiveHint *bool  `json:"destructiveHint"`
		IdempotentHint  *bool  `json:"idempotentHint"`
		OpenWorldHint   *bool  `json:"openWorldHint"`
	}
	if json.Unmarshal(raw, &a) != nil {
		return nil // the SDK decoded the same bytes, so this does not happen
	}
	return &tools.Annotations{Title: a.Title, ReadOnlyHint: a.ReadOnlyHint, DestructiveHint: a.DestructiveHint, IdempotentHint: a.IdempotentHint, OpenWorldHint: a.OpenWorldHint}
}

// copied is a new pointer to *p, so that our tools share nothing with the
// SDK's list.
func copied(p *bool) *bool {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// nonNull is raw, or nil for an absent or JSON null value.
func nonNull(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return raw
}

// marshaled re-encodes a value the SDK decoded from JSON, so it encodes.
func marshaled(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return nonNull(b)
}
