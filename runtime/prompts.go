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
	if !ok {
		return prompts.Rendered{}, fmt.Errorf("getting prompt %q: %w", name, prompts.ErrUnknownPrompt)
	}
	return p.Get(ctx, args)
}
