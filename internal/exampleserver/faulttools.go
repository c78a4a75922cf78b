package exampleserver

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The fault tools (Options.FaultTools) misbehave towards the client on
// request: one answers with a frame of any size, one floods the client with
// sampling or elicitation requests.

// maxHugeBytes bounds the huge tool, so a typo cannot exhaust the machine.
const maxHugeBytes = 64 << 20

// hugeArgs are the arguments of the huge tool.
type hugeArgs struct {
	Bytes int `json:"bytes" jsonschema:"how many bytes of text to answer with (at most 64 MiB)"`
}

// askArgs are the arguments of the ask tool.
type askArgs struct {
	Kind  string `json:"kind" jsonschema:"sampling or elicitation"`
	Count int    `json:"count" jsonschema:"how many requests to send at once (1 to 1000)"`
	Bytes int    `json:"bytes,omitempty" jsonschema:"bytes of text in each request (default 5)"`
	Tools int    `json:"tools,omitempty" jsonschema:"sampling only: how many tools each request offers the model (0 to 1000)"`
}

// addFaultTools registers the huge and ask tools.
func addFaultTools(srv *mcp.Server) {
	mcp.AddTool(srv, &mcp.Tool{Name: "huge", Description: "Answers with one text block of the given number of bytes."}, huge)
	mcp.AddTool(srv, &mcp.Tool{Name: "ask", Description: "Sends count sampling/createMessage or elicitation/create requests to the client at once and reports how each ended."}, ask)
}

func huge(_ context.Context, _ *mcp.CallToolRequest, in hugeArgs) (*mcp.CallToolResult, any, error) {
	if in.Bytes < 0 || in.Bytes > maxHugeBytes {
		return nil, nil, fmt.Errorf("bytes must be between 0 and %d, got %d", maxHugeBytes, in.Bytes)
	}
	return textResult(strings.Repeat("x", in.Bytes)), nil, nil
}

// mrtrVersion is the first protocol version on which a server asks the
// client through a tool result's InputRequests (multi round-trip requests)
// rather than with requests of its own.
const mrtrVersion = "2026-07-28"

// ask sends the requests and answers one line per outcome, sorted: "ok: N"
// for answered ones and "error: <message>: N" for each distinct error, so a
// test can count what the client refused and why. Before protocol
// 2026-07-28 it sends them as concurrent requests of its own; from then on
// it returns them as InputRequests, which the client fulfils all at once
// (and, if one fails, fails the call instead of retrying it).
func ask(ctx context.Context, req *mcp.CallToolRequest, in askArgs) (*mcp.CallToolResult, any, error) {
	if in.Count < 1 || in.Count > 1000 {
		return nil, nil, fmt.Errorf("count must be between 1 and 1000, got %d", in.Count)
	}
	if in.Bytes <= 0 {
		in.Bytes = 5
	}
	if in.Bytes > maxHugeBytes {
		return nil, nil, fmt.Errorf("bytes must be at most %d, got %d", maxHugeBytes, in.Bytes)
	}
	if in.Tools < 0 || in.Tools > 1000 {
		return nil, nil, fmt.Errorf("tools must be between 0 and 1000, got %d", in.Tools)
	}
	text := strings.Repeat("q", in.Bytes)
	sampling := &mcp.CreateMessageWithToolsParams{MaxTokens: 10,
		Messages: []*mcp.SamplingMessageV2{{Role: "user", Content: []mcp.Content{&mcp.TextContent{Text: text}}}}}
	for i := range in.Tools {
		sampling.Tools = append(sampling.Tools, &mcp.Tool{Name: fmt.Sprintf("tool_%d", i), InputSchema: json.RawMessage(`{"type":"object"}`)})
	}
	elicit := &mcp.ElicitParams{Message: text,
		RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"answer": map[string]any{"type": "string"}}}}
	var (
		send  func() error
		input mcp.InputRequest
	)
	switch in.Kind {
	case "sampling":
		input = sampling
		send = func() error { _, err := req.Session.CreateMessageWithTools(ctx, sampling); return err }
	case "elicitation":
		input = elicit
		send = func() error { _, err := req.Session.Elicit(ctx, elicit); return err }
	default:
		return nil, nil, fmt.Errorf("kind must be sampling or elicitation, got %q", in.Kind)
	}
	if p := req.Session.InitializeParams(); p != nil && p.ProtocolVersion >= mrtrVersion {
		if n := len(req.Params.InputResponses); n > 0 { // the client's retry
			return textResult(fmt.Sprintf("ok: %d", n)), nil, nil
		}
		requests := mcp.InputRequestMap{}
		for i := range in.Count {
			requests[fmt.Sprintf("ask-%d", i)] = input
		}
		return &mcp.CallToolResult{InputRequests: requests}, nil, nil
	}
	var (
		mu       sync.Mutex
		outcomes = map[string]int{}
		wg       sync.WaitGroup
	)
	for range in.Count {
		wg.Go(func() {
			key := "ok"
			if err := send(); err != nil {
				key = "error: " + err.Error()
			}
			mu.Lock()
			outcomes[key]++
			mu.Unlock()
		})
	}
	wg.Wait()
	return textResult(formatOutcomes(outcomes)), nil, nil
}

func formatOutcomes(outcomes map[string]int) string {
	lines := make([]string, 0, len(outcomes))
	for k, n := range outcomes {
		lines = append(lines, fmt.Sprintf("%s: %d", k, n))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}
