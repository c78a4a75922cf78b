package mcpconn

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Capabilities returns what the server declared in initialize (never nil).
func (c *Conn) Capabilities() *mcp.ServerCapabilities {
	if res := c.cs.InitializeResult(); res != nil && res.Capabilities != nil {
		return res.Capabilities
	}
	return &mcp.ServerCapabilities{}
}

// ProtocolVersion is the MCP version the server negotiated.
func (c *Conn) ProtocolVersion() string {
	if res := c.cs.InitializeResult(); res != nil {
		return res.ProtocolVersion
	}
	return ""
}

// ListTools lists the server's tools anew (after a tools/list_changed).
func (c *Conn) ListTools(ctx context.Context) (list []*mcp.Tool, err error) {
	if c.tap != nil {
		// A listing that times out is forgotten by the tap, like a call.
		slot := &structuredSlot{}
		defer c.tap.forget(slot)
		ctx = context.WithValue(ctx, structuredSlotKey{}, slot)
	}
	err = c.do(ctx, op{verb: "listing tools"}, func(ctx context.Context) error {
		list, err = listTools(ctx, c.cs)
		return err
	})
	return list, err
}

// ListPrompts lists the server's prompts.
func (c *Conn) ListPrompts(ctx context.Context) (list []*mcp.Prompt, err error) {
	err = c.do(ctx, op{verb: "listing prompts"}, func(ctx context.Context) error {
		for p, err := range c.cs.Prompts(ctx, nil) {
			if err != nil {
				return err
			}
			list = append(list, p)
		}
		return nil
	})
	return list, err
}

// GetPrompt renders a prompt with its arguments.
func (c *Conn) GetPrompt(ctx context.Context, name string, args map[string]string) (res *mcp.GetPromptResult, err error) {
	err = c.do(ctx, op{verb: "getting prompt", arg: name}, func(ctx context.Context) error {
		res, err = c.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: name, Arguments: args, Meta: c.withTraceMeta(ctx, nil)})
		return err
	})
	return res, err
}

// ListResources lists one page of the server's resources and, on the
// first page, its resource templates. Like a read, a page the SDK caches
// by its cursor but will never serve is emptied (see uncachedPage).
func (c *Conn) ListResources(ctx context.Context, cursor string) (res *mcp.ListResourcesResult, templates []*mcp.ResourceTemplate, err error) {
	err = c.do(ctx, op{verb: "listing resources"}, func(ctx context.Context) error {
		if res, err = c.cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor}); err != nil {
			return err
		}
		if cursor == "" {
			// Templates are optional: a server without them may answer
			// with an error, which does not make its resources unusable.
			if t, err := c.cs.ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{}); err == nil {
				templates = t.ResourceTemplates
			}
		}
		return nil
	})
	if err == nil && c.ProtocolVersion() >= cachingProtocol {
		res = uncachedPage(res)
	}
	return res, templates, err
}

// ReadResource reads a resource. On a 2026-07-28 session the SDK keeps
// every result in its read cache (see uncached); the result returned
// here is the caller's, except one the server gave a ttlMs, which is the
// SDK's cached one, shared with every read of the URI while it lasts:
// the caller must not change it.
func (c *Conn) ReadResource(ctx context.Context, uri string) (res *mcp.ReadResourceResult, err error) {
	err = c.do(ctx, op{verb: "reading resource", arg: uri}, func(ctx context.Context) error {
		res, err = c.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri, Meta: c.withTraceMeta(ctx, nil)})
		return err
	})
	if err == nil && c.ProtocolVersion() >= cachingProtocol {
		res = uncached(res)
	}
	return res, err
}
