package mcpconn

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Capabilities returns what the server declared in initialize (never nil).
func (c *Conn) Capabilities() *mcp.ServerCapabilities {
	if res := c.cs.InitializeResult(); res != nil && res.Capabilities != nil {
		return res.Capabilities
	}
	return &mcp.ServerCapabilities{}
}

// ListTools lists the server's tools anew (after a tools/list_changed),
// within timeout_seconds.
func (c *Conn) ListTools(ctx context.Context) ([]*mcp.Tool, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	list, err := listTools(ctx, c.cs)
	return list, c.listError("listing tools", err)
}

// ListPrompts lists the server's prompts, within timeout_seconds.
func (c *Conn) ListPrompts(ctx context.Context) ([]*mcp.Prompt, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var out []*mcp.Prompt
	for p, err := range c.cs.Prompts(ctx, nil) {
		if err != nil {
			return nil, c.listError("listing prompts", err)
		}
		out = append(out, p)
	}
	return out, nil
}

// GetPrompt renders a prompt with its arguments, within timeout_seconds.
func (c *Conn) GetPrompt(ctx context.Context, name string, args map[string]string) (*mcp.GetPromptResult, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	res, err := c.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: name, Arguments: args})
	return res, c.listError(fmt.Sprintf("getting prompt %q", name), err)
}

// ListResources lists one page of the server's resources and, on the
// first page, its resource templates, within timeout_seconds.
func (c *Conn) ListResources(ctx context.Context, cursor string) (*mcp.ListResourcesResult, []*mcp.ResourceTemplate, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	res, err := c.cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor})
	if err != nil {
		return nil, nil, c.listError("listing resources", err)
	}
	var templates []*mcp.ResourceTemplate
	if cursor == "" {
		// Templates are optional: a server without them may answer with
		// an error, which does not make its resources unusable.
		if t, err := c.cs.ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{}); err == nil {
			templates = t.ResourceTemplates
		}
	}
	return res, templates, nil
}

// ReadResource reads a resource, within timeout_seconds.
func (c *Conn) ReadResource(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	res, err := c.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	return res, c.listError(fmt.Sprintf("reading resource %q", uri), err)
}

func (c *Conn) listError(what string, err error) error {
	if err == nil {
		return nil
	}
	return redact(c.redactor, fmt.Errorf("%s on %q: %w", what, c.name, err))
}
