package binding

import (
	"fmt"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/tools"
)

// Policy is what a server's config says about its tools beyond how to
// reach them: which are registered (G1) and how much of a result reaches
// the model (G3). The owner publishes a new one with SetPolicy when the
// config changes; calls read it with one atomic load, so a change holds
// for a tool value a host kept from before, too.
type Policy struct {
	// Filter decides which tools are registered, by their original names
	// (the resource and prompt tools by theirs: list_resources, …).
	Filter config.ToolFilter
	// MaxText and MaxMedia are the caps of one result (config.NoCap: none),
	// see capResult.
	MaxText, MaxMedia int
}

// PolicyOf returns the policy cfg asks for, defaults applied.
func PolicyOf(cfg config.Server) *Policy {
	text, media := cfg.OutputCaps()
	return &Policy{Filter: cfg.Tools, MaxText: text, MaxMedia: media}
}

// SetPolicy makes p the policy of the binding's next Tools and of every
// call from now on. It is for the owner, like Publish.
func (b *Binding) SetPolicy(p *Policy) { b.policy.Store(p) }

// currentPolicy is the published policy (never nil: New publishes the
// default, every tool and the default caps).
func (b *Binding) currentPolicy() *Policy { return b.policy.Load() }

// Filtered is how many tools the last Tools left out for the filter. It
// is for the owner, like Tools.
func (b *Binding) Filtered() int { return b.filtered }

// allowed reports whether a call of the tool original, registered under
// built, may run under p: a tool a host kept from before a filter change
// must not reach a server that filters it now. The common case, a policy
// unchanged since the tool was registered, is one pointer comparison.
func allowed(p, built *Policy, original string) bool {
	return p == built || p.Filter.Allows(original)
}

// errFiltered is the error of a call of a tool the filter leaves out now.
func errFiltered(server, original string) error {
	return fmt.Errorf("calling %q on %q: the server's tools filter leaves it out: %w", original, server, tools.ErrUnknownTool)
}
