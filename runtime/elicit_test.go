package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/config"
)

// Options.Elicit answers a server's elicitation with the server's name;
// without it the server sees a decline.
func TestElicit(t *testing.T) {
	// The tool asks for a name and returns the action and what came back.
	transport := func(config.Server) mcp.Transport {
		srv := mcp.NewServer(&mcp.Implementation{Name: "asker", Version: "1"}, nil)
		ask := &mcp.ElicitParams{Message: "Your name?", RequestedSchema: map[string]any{
			"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}},
		}}
		srv.AddTool(&mcp.Tool{Name: "ask", InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				text := "no answer"
				if res, ok := req.Params.InputResponses["name"].(*mcp.ElicitResult); ok {
					text = res.Action
					if name, ok := res.Content["name"].(string); ok {
						text += " " + name
					}
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
				}
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"name": ask}}, nil
			})
		ct, st := mcp.NewInMemoryTransports()
		if _, err := srv.Connect(context.Background(), st, nil); err != nil {
			t.Error(err)
		}
		return ct
	}
	answer := func(_ context.Context, req ElicitationRequest) (ElicitationResult, error) {
		if req.Message != "Your name?" || !strings.Contains(string(req.Schema), `"name"`) {
			return ElicitationResult{}, fmt.Errorf("request %+v", req)
		}
		return ElicitationResult{Action: "accept", Content: map[string]any{"name": "from " + req.Server}}, nil
	}
	for _, tc := range []struct {
		name   string
		elicit func(context.Context, ElicitationRequest) (ElicitationResult, error)
		want   string
	}{
		{"callback", answer, "accept from asker"},
		{"default", nil, "decline"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := start(t, Options{transport: transport, Elicit: tc.elicit}, memServer("asker"))
			rt.waitReady(t, "asker")
			res, err := rt.CallTool(t.Context(), "asker__ask", map[string]any{})
			if err != nil {
				t.Fatalf("CallTool: %v", err)
			}
			if len(res.Content) != 1 || res.Content[0].Text != tc.want {
				t.Fatalf("the tool saw %+v, want %q", res.Content, tc.want)
			}
		})
	}
}
