package binding

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/internal/mcpconn"
)

// Passthrough receives the server's own answer to a tool call, beside the
// converted tools.Result the call returns: the gateway (runtime.MCPServer)
// hands an MCP client every content block and the _meta as the server sent
// them, which the converted result keeps only as text.
type Passthrough struct {
	// Result is the server's answer, nil until the call got one. The
	// caller reads it after the call returned. Like the converted result
	// it is scrubbed of the connection's secrets where the runtime
	// describes the answer rather than quotes it: the URIs, names and
	// titles of resource links and embedded resources, and the _meta
	// objects (the result's and every block's). Text is the tool's output, as
	// in tools.Result.
	Result *mcp.CallToolResult
}

type passthroughKey struct{}

// WithPassthrough returns a context whose tool calls (of server tools,
// not of the resource and prompt tools the runtime adds) leave the
// server's answer in the returned Passthrough.
func WithPassthrough(ctx context.Context) (context.Context, *Passthrough) {
	p := &Passthrough{}
	return context.WithValue(ctx, passthroughKey{}, p), p
}

// keep stores a scrubbed copy of res in the Passthrough of ctx, if it has
// one.
func keep(ctx context.Context, conn *mcpconn.Conn, res *mcp.CallToolResult) {
	p, ok := ctx.Value(passthroughKey{}).(*Passthrough)
	if !ok || res == nil {
		return
	}
	out := &mcp.CallToolResult{IsError: res.IsError, Meta: ScrubMeta(conn, res.Meta), Content: make([]mcp.Content, 0, len(res.Content))}
	for _, c := range res.Content {
		switch c := c.(type) {
		case nil:
			continue
		case *mcp.TextContent:
			b := *c
			b.Meta = ScrubMeta(conn, b.Meta)
			out.Content = append(out.Content, &b)
		case *mcp.ImageContent:
			b := *c
			b.Meta = ScrubMeta(conn, b.Meta)
			out.Content = append(out.Content, &b)
		case *mcp.AudioContent:
			b := *c
			b.Meta = ScrubMeta(conn, b.Meta)
			out.Content = append(out.Content, &b)
		case *mcp.ResourceLink:
			l := *c
			l.URI, l.Name, l.Title, l.Description, l.MIMEType = conn.Scrub(l.URI), conn.Scrub(l.Name), conn.Scrub(l.Title), conn.Scrub(l.Description), conn.Scrub(l.MIMEType)
			l.Meta = ScrubMeta(conn, l.Meta)
			out.Content = append(out.Content, &l)
		case *mcp.EmbeddedResource:
			e := *c
			if e.Resource != nil {
				r := *e.Resource
				r.URI, r.MIMEType, r.Meta = conn.Scrub(r.URI), conn.Scrub(r.MIMEType), ScrubMeta(conn, r.Meta)
				e.Resource = &r
			}
			e.Meta = ScrubMeta(conn, e.Meta)
			out.Content = append(out.Content, &e)
		default:
			out.Content = append(out.Content, c)
		}
	}
	p.Result = out
}

// ScrubMeta is m scrubbed of conn's secrets as JSON (redact.Scrubber.JSON),
// nil when empty or when what is left does not decode as an object.
func ScrubMeta(conn *mcpconn.Conn, m mcp.Meta) mcp.Meta {
	if len(m) == 0 {
		return nil
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return nil
	}
	var out mcp.Meta
	if json.Unmarshal(conn.ScrubJSON(raw), &out) != nil {
		return nil
	}
	return out
}
