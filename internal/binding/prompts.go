package binding

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/adapter"
	"github.com/openprogram/mcpvisor/internal/mcpconn"
	"github.com/openprogram/mcpvisor/prompts"
	"github.com/openprogram/mcpvisor/tools"
)

// Prompts turns a server's prompt list, as conn listed it, into registry
// prompts, rendered on whatever connection is current when a host asks.
func (b *Binding) Prompts(conn *mcpconn.Conn, list []*mcp.Prompt) []prompts.Prompt {
	server := b.server
	var out []prompts.Prompt
	seen := map[string]string{} // registry name -> original name
	for _, p := range list {
		if p == nil {
			continue
		}
		original, name := p.Name, adapter.ToolName(server, p.Name)
		if first, dup := seen[name]; dup {
			b.logger.Warn("prompt name taken by another prompt of the same server; skipping it", "prompt", original, "name", name, "kept", first)
			continue
		}
		seen[name] = original
		get := func(ctx context.Context, args map[string]string) (prompts.Rendered, error) {
			conn := b.current.Load()
			if conn == nil {
				return prompts.Rendered{}, fmt.Errorf("prompt %q of %q: %w", original, server, tools.ErrNotReady)
			}
			return renderPrompt(ctx, conn, original, args)
		}
		pr := prompts.New(name, server, original, p.Title, p.Description, promptArguments(p), get)
		pr.Icons = conn.Icons(p.Icons)
		out = append(out, pr)
	}
	return out
}
