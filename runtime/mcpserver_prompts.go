package runtime

import (
	"context"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/prompts"
)

// syncPrompts makes the server's prompts the registry's that the filter
// allows (by registry name, as for tools), as syncTools does for tools.
func (m *mirror) syncPrompts() {
	want := map[string]bool{}
	for _, p := range m.rt.prompts.List() {
		if !m.opts.Tools.allows(p.Name) {
			continue
		}
		mp := mcpPrompt(p)
		key := digestOf(mp)
		want[p.Name] = true
		if m.prompts[p.Name] == key {
			continue
		}
		m.srv.AddPrompt(mp, m.getPrompt(p.Name))
		m.prompts[p.Name] = key
	}
	var gone []string
	for name := range m.prompts {
		if !want[name] {
			gone = append(gone, name)
			delete(m.prompts, name)
		}
	}
	if len(gone) > 0 {
		m.srv.RemovePrompts(gone...)
	}
}

func mcpPrompt(p prompts.Prompt) *mcp.Prompt {
	mp := &mcp.Prompt{Name: p.Name, Title: p.Title, Description: p.Description, Icons: mcpIcons(p.Icons)}
	for _, a := range p.Arguments {
		mp.Arguments = append(mp.Arguments, &mcp.PromptArgument{Name: a.Name, Description: a.Description, Required: a.Required})
	}
	return mp
}

// getPrompt is the handler of the prompt registered as name.
func (m *mirror) getPrompt(name string) mcp.PromptHandler {
	return func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		rendered, err := m.rt.GetPrompt(ctx, name, req.Params.Arguments)
		var argErr *prompts.ArgumentError
		switch {
		case errors.As(err, &argErr), errors.Is(err, prompts.ErrUnknownPrompt):
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
		case err != nil:
			return nil, err
		}
		out := &mcp.GetPromptResult{Description: rendered.Description, Messages: make([]*mcp.PromptMessage, 0, len(rendered.Messages))}
		for _, msg := range rendered.Messages {
			out.Messages = append(out.Messages, &mcp.PromptMessage{Role: mcp.Role(msg.Role), Content: mcpContent(msg.Content)})
		}
		return out, nil
	}
}
