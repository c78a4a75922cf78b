package exampleserver

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// addPrompts registers the server's static prompts.
func addPrompts(srv *mcp.Server) {
	srv.AddPrompt(&mcp.Prompt{
		Name:        "greet",
		Title:       "Greet someone",
		Description: "Asks the model to greet someone by name.",
		Icons:       []mcp.Icon{SmallIcon(), BigIcon()},
		Arguments: []*mcp.PromptArgument{
			{Name: "name", Description: "who to greet", Required: true},
			{Name: "style", Description: "how to greet, such as warmly; added after the name"},
		},
	}, greet)
}

// greet renders the greet prompt: one user message, "Please greet <name>."
// or "Please greet <name> <style>.".
func greet(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	name := req.Params.Arguments["name"]
	if name == "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: `prompt "greet" needs the argument "name"`}
	}
	text := "Please greet " + name
	if style := req.Params.Arguments["style"]; style != "" {
		text += " " + style
	}
	return &mcp.GetPromptResult{
		Description: "A greeting for " + name,
		Messages:    []*mcp.PromptMessage{userMessage(text + ".")},
	}, nil
}

// extraPrompt is the handler of the prompt extra_<n> that the change tool
// adds: one user message, "extra prompt <n>".
func extraPrompt(n int) mcp.PromptHandler {
	return func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{userMessage(fmt.Sprintf("extra prompt %d", n))}}, nil
	}
}

// userMessage is a prompt message from the user holding text.
func userMessage(text string) *mcp.PromptMessage {
	return &mcp.PromptMessage{Role: "user", Content: &mcp.TextContent{Text: text}}
}
