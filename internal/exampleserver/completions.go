package exampleserver

import (
	"context"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Completion candidates: greet's name and style arguments and the id of
// demo://notes/{id}. Tests compare against them.
var (
	greetNames     = []string{"Ada", "Alan", "Alice", "Bob", "Grace"}
	greetFullNames = []string{"Ada Lovelace", "Alan Turing", "Alice Ball", "Bob Kahn", "Grace Hopper"}
	greetStyles    = []string{"boldly", "briefly", "formally", "warmly", "wittily"}
	noteIDs        = []string{"1", "2", "3", "7", "10", "12", "20"}
)

// complete answers completion/complete: the candidates of the argument
// that start with the value so far, so that they narrow as it grows.
// greet's name uses the context: with style "formally" already given, the
// names are full names.
func complete(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	p := req.Params
	var candidates []string
	switch {
	case p.Ref == nil:
	case p.Ref.Type == "ref/prompt" && p.Ref.Name == "greet" && p.Argument.Name == "name":
		candidates = greetNames
		if p.Context != nil && p.Context.Arguments["style"] == "formally" {
			candidates = greetFullNames
		}
	case p.Ref.Type == "ref/prompt" && p.Ref.Name == "greet" && p.Argument.Name == "style":
		candidates = greetStyles
	case p.Ref.Type == "ref/resource" && p.Ref.URI == notesTemplate && p.Argument.Name == "id":
		candidates = noteIDs
	}
	values := []string{}
	for _, c := range candidates {
		if strings.HasPrefix(c, p.Argument.Value) {
			values = append(values, c)
		}
	}
	return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: values, Total: len(values)}}, nil
}
