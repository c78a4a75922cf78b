package runtime

import (
	"context"
	"fmt"

	"github.com/openprogram/mcpvisor/prompts"
)

// Prompts lists the prompts of every ready server, named
// "{server}__{prompt}" and sorted by name: a host's slash commands.
func (r *Runtime) Prompts() []prompts.Prompt { return r.prompts.List() }

// GetPrompt renders a prompt by its registry name with its arguments on
// its server's session. An unknown name fails with prompts.ErrUnknownPrompt,
// a missing required argument with a *prompts.ArgumentError.
func (r *Runtime) GetPrompt(ctx context.Context, name string, args map[string]string) (prompts.Rendered, error) {
	p, ok := r.prompts.Get(name)
	if r.tel != nil {
		return r.tracedPrompt(ctx, name, &p, ok, args)
	}
	return r.getPrompt(ctx, name, &p, ok, args)
}

// getPrompt is GetPrompt once the registry was asked: p is the prompt if
// known.
func (r *Runtime) getPrompt(ctx context.Context, name string, p *prompts.Prompt, known bool, args map[string]string) (prompts.Rendered, error) {
	if !known {
		return prompts.Rendered{}, fmt.Errorf("getting prompt %q: %w", name, prompts.ErrUnknownPrompt)
	}
	return p.Get(ctx, args)
}
