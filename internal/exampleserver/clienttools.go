package exampleserver

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The client tools ask the client during a call and answer with what it
// said: elicit (a form elicitation for one string, answer) and roots
// (roots/list). Before protocol 2026-07-28 they send requests of their
// own; from then on they return them as InputRequests.

// RootsChangedLine is the stderr line the server writes (with -client-tools)
// on each notifications/roots/list_changed.
const RootsChangedLine = "roots changed"

type elicitArgs struct {
	Message string `json:"message,omitempty" jsonschema:"what to ask (default: Your answer?)"`
	MetaEnv string `json:"meta_env,omitempty" jsonschema:"an environment variable whose value the request's _meta carries (env), as a server leaking a secret would"`
}

// envMeta is the _meta carrying the value of the environment variable
// name (a tool's meta_env argument); nil for no name.
func envMeta(name string) mcp.Meta {
	if name == "" {
		return nil
	}
	return mcp.Meta{"env": os.Getenv(name)}
}

func addClientTools(srv *mcp.Server) {
	mcp.AddTool(srv, &mcp.Tool{Name: "elicit", Description: "Asks the client for a string answer (form elicitation); returns the action and content."}, elicitTool)
	mcp.AddTool(srv, &mcp.Tool{Name: "roots", Description: "Lists the client's roots; returns their URIs, one a line."}, rootsTool)
}

// rootsChanged is the server's notifications/roots/list_changed handler.
func rootsChanged(stderr *lockedWriter) func(context.Context, *mcp.RootsListChangedRequest) {
	return func(context.Context, *mcp.RootsListChangedRequest) { _ = stderr.writeLine(RootsChangedLine) }
}

func elicitTool(ctx context.Context, req *mcp.CallToolRequest, in elicitArgs) (*mcp.CallToolResult, any, error) {
	if in.Message == "" {
		in.Message = "Your answer?"
	}
	ask := &mcp.ElicitParams{Message: in.Message,
		RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"answer": map[string]any{"type": "string"}}}}
	ask.Meta = envMeta(in.MetaEnv)
	var res *mcp.ElicitResult
	if mrtr(req) {
		r, ok := req.Params.InputResponses["elicit"].(*mcp.ElicitResult)
		if !ok {
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"elicit": ask}}, nil, nil
		}
		res = r
	} else {
		r, err := req.Session.Elicit(ctx, ask)
		if err != nil {
			return nil, nil, err
		}
		res = r
	}
	content, _ := json.Marshal(res.Content)
	return textResult(fmt.Sprintf("%s %s", res.Action, content)), nil, nil
}

func rootsTool(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
	var res *mcp.ListRootsResult
	if mrtr(req) {
		r, ok := req.Params.InputResponses["roots"].(*mcp.ListRootsResult)
		if !ok {
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"roots": &mcp.ListRootsParams{}}}, nil, nil
		}
		res = r
	} else {
		r, err := req.Session.ListRoots(ctx, nil)
		if err != nil {
			return nil, nil, err
		}
		res = r
	}
	uris := make([]string, 0, len(res.Roots))
	for _, r := range res.Roots {
		uris = append(uris, r.URI)
	}
	return textResult("roots: " + strings.Join(uris, "\n")), nil, nil
}

// mrtr reports whether the call's client takes InputRequests.
func mrtr(req *mcp.CallToolRequest) bool {
	p := req.Session.InitializeParams()
	return p != nil && p.ProtocolVersion >= mrtrVersion
}
