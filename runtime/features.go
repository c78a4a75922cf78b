package runtime

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/adapter"
	"github.com/openprogram/mcpvisor/tools"
)

// The client features a host offers its servers (S9), in the runtime's own
// types: a host answers a server's questions without importing the go-sdk.

// SamplingRequest is a server asking the host's model for a completion
// (sampling/createMessage).
type SamplingRequest struct {
	// Server is the configured name of the asking server.
	Server string
	// Messages is the conversation to complete, content converted as tool
	// results are (images keep their bytes).
	Messages      []SamplingMessage
	SystemPrompt  string
	MaxTokens     int64
	Temperature   float64
	StopSequences []string
	// ModelHints are the server's model name hints, most preferred first.
	ModelHints []string
}

// SamplingMessage is one message of a SamplingRequest.
type SamplingMessage struct {
	Role    string // "user" or "assistant"
	Content tools.Content
}

// SamplingResult is the host model's answer.
type SamplingResult struct {
	// Text is the completion.
	Text string
	// Model names the model that answered.
	Model string
	// StopReason is why it stopped ("endTurn", "maxTokens", ...), if known.
	StopReason string
}

// ElicitationRequest is a server asking the user for input
// (elicitation/create).
type ElicitationRequest struct {
	// Server is the configured name of the asking server.
	Server string
	// Message is what to show the user.
	Message string
	// Schema is the JSON Schema of the answer the server wants (form mode).
	Schema json.RawMessage
	// URL is the page to send the user to (URL mode), if any.
	URL string
}

// ElicitationResult is the user's answer: Action "accept" with Content,
// "decline", or "cancel".
type ElicitationResult struct {
	Action  string
	Content map[string]any
}

// sampler adapts Options.Sample to the SDK's handler.
func sampler(f func(context.Context, SamplingRequest) (SamplingResult, error)) func(context.Context, string, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	if f == nil {
		return nil
	}
	return func(ctx context.Context, server string, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
		p := req.Params
		if p == nil {
			return nil, errors.New("sampling request without parameters")
		}
		in := SamplingRequest{Server: server, SystemPrompt: p.SystemPrompt, MaxTokens: p.MaxTokens,
			Temperature: p.Temperature, StopSequences: p.StopSequences}
		for _, m := range p.Messages {
			if m != nil {
				in.Messages = append(in.Messages, SamplingMessage{Role: string(m.Role), Content: adapter.ConvertContent(m.Content)})
			}
		}
		if p.ModelPreferences != nil {
			for _, h := range p.ModelPreferences.Hints {
				if h != nil && h.Name != "" {
					in.ModelHints = append(in.ModelHints, h.Name)
				}
			}
		}
		out, err := f(ctx, in)
		if err != nil {
			return nil, err
		}
		return &mcp.CreateMessageResult{Role: "assistant", Model: out.Model, StopReason: out.StopReason,
			Content: &mcp.TextContent{Text: out.Text}}, nil
	}
}

// elicitor adapts Options.Elicit to the SDK's handler.
func elicitor(f func(context.Context, ElicitationRequest) (ElicitationResult, error)) func(context.Context, string, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	if f == nil {
		return nil
	}
	return func(ctx context.Context, server string, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		p := req.Params
		if p == nil {
			return nil, errors.New("elicitation request without parameters")
		}
		in := ElicitationRequest{Server: server, Message: p.Message, URL: p.URL}
		if p.RequestedSchema != nil {
			in.Schema, _ = json.Marshal(p.RequestedSchema)
		}
		out, err := f(ctx, in)
		if err != nil {
			return nil, err
		}
		return &mcp.ElicitResult{Action: out.Action, Content: out.Content}, nil
	}
}
