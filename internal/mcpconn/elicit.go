package mcpconn

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// elicitHandler is the client's elicitation/create handler: f, or one that
// declines every request when f is nil, so that a server asking for input
// never waits on a host that cannot answer.
//
// A non-nil handler is what makes the go-sdk advertise the elicitation
// capability in initialize: {"form":{}} from protocol 2025-11-25 on, {}
// before (which those versions read as form). URL mode is not advertised:
// it needs a host that opens URLs for the user.
func elicitHandler(f func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)) func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	if f != nil {
		return f
	}
	return func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
}
