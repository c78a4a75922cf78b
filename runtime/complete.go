package runtime

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/prompts"
)

// CompletionRef says what a completion is for: either a prompt argument,
// by the prompt's registry name (as Prompts lists it, "{server}__{prompt}"
// — the registry knows its server and its name there), or a variable of a
// resource template of a server, by the server's configured name and the
// template's URI template. A host only ever sees registry names for
// prompts, so it names a prompt by one; a resource template has no
// registry name, so it is named by its server and URI template, as the
// server lists it.
type CompletionRef struct {
	// Prompt is a prompt's registry name.
	Prompt string
	// Server and ResourceTemplate name a resource template
	// ("file:///{path}") of a server.
	Server, ResourceTemplate string
}

// Completion is a server's suggestions for an argument's value: at most
// mcpconn's MaxCompletionValues (100, the spec's cap) values, each
// scrubbed of secrets and cut to 1 KiB, as they are the server's words.
type Completion struct {
	// Values are the suggested values, in the server's order; never nil
	// (empty when the server has none).
	Values []string `json:"values"`
	// HasMore: the server has more values than it sent.
	HasMore bool `json:"has_more"`
	// Total is the number of values the server says there are, if it said.
	Total int `json:"total,omitempty"`
}

// Complete asks a server for completions of argument (a prompt argument
// or a template variable) whose value so far is value; others are the
// values of the other arguments already filled in (the request's
// context). The server must declare completions (else ErrNotDeclared).
// An unknown prompt fails with prompts.ErrUnknownPrompt, an unknown
// server with ErrUnknownServer, one without a live session with
// ErrNotReady.
func (r *Runtime) Complete(ctx context.Context, ref CompletionRef, argument, value string, others map[string]string) (Completion, error) {
	server, mref, err := r.completionTarget(ref)
	if err != nil {
		return Completion{}, err
	}
	what := fmt.Sprintf("completing %q", argument)
	conn, err := r.connOf(server, what)
	if err != nil {
		return Completion{}, err
	}
	if conn.Capabilities().Completions == nil {
		return Completion{}, fmt.Errorf("%s on %q: completions: %w", what, server, ErrNotDeclared)
	}
	res, err := conn.Complete(ctx, mref, argument, value, others)
	if err != nil {
		return Completion{}, err
	}
	c := res.Completion
	if c.Values == nil {
		c.Values = []string{}
	}
	return Completion{Values: c.Values, HasMore: c.HasMore, Total: c.Total}, nil
}

// completionTarget is the server a ref goes to and the reference it is
// there.
func (r *Runtime) completionTarget(ref CompletionRef) (string, *mcp.CompleteReference, error) {
	switch {
	case ref.Prompt != "" && ref.Server == "" && ref.ResourceTemplate == "":
		p, ok := r.prompts.Get(ref.Prompt)
		if !ok {
			return "", nil, fmt.Errorf("completing an argument of prompt %q: %w", ref.Prompt, prompts.ErrUnknownPrompt)
		}
		return p.Server, &mcp.CompleteReference{Type: "ref/prompt", Name: p.OriginalName}, nil
	case ref.Prompt == "" && ref.Server != "" && ref.ResourceTemplate != "":
		return ref.Server, &mcp.CompleteReference{Type: "ref/resource", URI: ref.ResourceTemplate}, nil
	}
	return "", nil, fmt.Errorf("completing: %w", ErrBadCompletionRef)
}
