package mcpconn

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/config"
)

// elicitServer serves one tool, "ask", that asks the client for a name and
// answers with what came back: the action and the content as JSON.
//
// protocol picks how it asks. Before 2026-07-28 the tool sends
// elicitation/create itself through req.Session.Elicit; from 2026-07-28 on
// a server may not send requests while serving one, so the tool returns an
// input request instead and the client fulfils it and calls again
// (SEP-2322). Both land in the same client handler.
func elicitServer(t *testing.T, protocol string) mcp.Transport {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "elicit", Version: "1"}, &mcp.ServerOptions{SupportedProtocolVersions: []string{protocol}})
	params := &mcp.ElicitParams{
		Message: "Your name?",
		RequestedSchema: map[string]any{
			"type":       "object",
			"properties": map[string]any{"name": map[string]any{"type": "string"}},
		},
	}
	answer := func(res *mcp.ElicitResult) *mcp.CallToolResult {
		content, _ := json.Marshal(res.Content)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%s %s", res.Action, content)}}}
	}
	srv.AddTool(&mcp.Tool{Name: "ask", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if protocol < "2026-07-28" {
				res, err := req.Session.Elicit(ctx, params)
				if err != nil {
					return nil, err
				}
				return answer(res), nil
			}
			if got, ok := req.Params.InputResponses["name"].(*mcp.ElicitResult); ok {
				return answer(got), nil
			}
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"name": params}}, nil
		})
	return serveInMemory(t, srv)
}

func TestElicit(t *testing.T) {
	accept := func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		if req.Params.Message != "Your name?" {
			return nil, fmt.Errorf("message %q", req.Params.Message)
		}
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
	}
	for _, protocol := range []string{"2025-11-25", "2026-07-28"} {
		for _, tc := range []struct {
			name   string
			elicit func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)
			want   string
		}{
			{"callback", accept, `accept {"name":"Ada"}`},
			{"default", nil, "decline null"},
		} {
			t.Run(protocol+"/"+tc.name, func(t *testing.T) {
				ctx := t.Context()
				conn, err := testDial(ctx, Options{
					Server:    config.Server{Name: "e", Type: config.TypeLocal, Command: []string{"unused"}, Enabled: true},
					Transport: elicitServer(t, protocol),
					Features:  Features{Elicit: tc.elicit},
				})
				if err != nil {
					t.Fatalf("Dial: %v", err)
				}
				defer conn.Close()
				res, err := conn.CallTool(ctx, "ask", map[string]any{})
				if err != nil {
					t.Fatalf("CallTool: %v", err)
				}
				if res.IsError || len(res.Content) != 1 {
					t.Fatalf("result: %+v", res)
				}
				if got := res.Content[0].(*mcp.TextContent).Text; got != tc.want {
					t.Fatalf("the tool saw %q, want %q", got, tc.want)
				}
			})
		}
	}
}

// TestElicitCapability: the client advertises elicitation whether or not
// the host handles it (form mode from 2025-11-25 on).
func TestElicitCapability(t *testing.T) {
	ct, st := mcp.NewInMemoryTransports()
	srv := mcp.NewServer(&mcp.Implementation{Name: "caps", Version: "1"}, &mcp.ServerOptions{SupportedProtocolVersions: []string{"2025-11-25"}})
	ss, err := srv.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatalf("server connect: %v", err)
	}
	defer ss.Close()
	conn, err := testDial(t.Context(), Options{
		Server:    config.Server{Name: "e", Type: config.TypeLocal, Command: []string{"unused"}, Enabled: true},
		Transport: ct,
	})
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer conn.Close()
	caps := ss.InitializeParams().Capabilities
	if caps == nil || caps.Elicitation == nil || caps.Elicitation.Form == nil {
		t.Fatalf("capabilities %+v: want elicitation with form", caps)
	}
}
