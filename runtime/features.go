package runtime

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The client features a host offers its servers (S9), in the runtime's own
// types: a host answers a server's questions without importing the go-sdk.

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
