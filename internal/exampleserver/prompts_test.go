package exampleserver

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestListPrompts(t *testing.T) {
	cs := connectInMemory(t, Options{})
	if caps := cs.InitializeResult().Capabilities; caps.Prompts == nil || !caps.Prompts.ListChanged {
		t.Errorf("prompts capability = %+v, want one with listChanged", caps.Prompts)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	res, err := cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Prompts) != 1 || res.Prompts[0].Name != "greet" {
		t.Fatalf("prompts = %+v, want only greet", res.Prompts)
	}
	args := res.Prompts[0].Arguments
	if len(args) != 2 || args[0].Name != "name" || !args[0].Required || args[1].Name != "style" || args[1].Required {
		t.Fatalf("greet arguments = %+v, want name (required) and style (optional)", args)
	}
	for _, a := range args {
		if strings.TrimSpace(a.Description) == "" {
			t.Errorf("greet.%s has no description", a.Name)
		}
	}
}

func TestGreetPrompt(t *testing.T) {
	cs := connectInMemory(t, Options{})
	tests := []struct {
		args map[string]string
		want string
	}{
		{map[string]string{"name": "Ada"}, "Please greet Ada."},
		{map[string]string{"name": "Ada", "style": "warmly"}, "Please greet Ada warmly."},
		{map[string]string{"name": "Grace Hopper", "style": ""}, "Please greet Grace Hopper."},
	}
	for _, tt := range tests {
		if got := promptText(t, cs, "greet", tt.args); got != tt.want {
			t.Errorf("greet(%v) = %q, want %q", tt.args, got, tt.want)
		}
	}
}

func TestGreetPromptNeedsName(t *testing.T) {
	cs := connectInMemory(t, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	for _, args := range []map[string]string{nil, {"style": "warmly"}, {"name": ""}} {
		res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet", Arguments: args})
		var werr *jsonrpc.Error
		if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams || !strings.Contains(werr.Message, `"name"`) {
			t.Errorf("greet(%v) = %+v, %v; want an invalid-params error naming the argument", args, res, err)
		}
	}
}

// promptText gets a prompt that must render as one user text message and
// returns the text.
func promptText(t *testing.T, cs *mcp.ClientSession, name string, args map[string]string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("GetPrompt(%s, %v): %v", name, args, err)
	}
	if len(res.Messages) != 1 || res.Messages[0].Role != "user" {
		t.Fatalf("GetPrompt(%s, %v) = %+v, want one user message", name, args, res.Messages)
	}
	tc, ok := res.Messages[0].Content.(*mcp.TextContent)
	if !ok {
		t.Fatalf("GetPrompt(%s, %v): content %T, want *mcp.TextContent", name, args, res.Messages[0].Content)
	}
	return tc.Text
}
