package exampleserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The consult tool shows sampling with tools (MCP 2025-11-25): it asks the
// client's model a question offering it a tool of its own, add, runs the
// uses the model answers with, and asks again with their results.

// consultArgs are the arguments of the consult tool.
type consultArgs struct {
	Question   string `json:"question" jsonschema:"what to ask the client's model"`
	ToolChoice string `json:"tool_choice,omitempty" jsonschema:"how the model must use the add tool: auto, required (the default) or none"`
	MetaEnv    string `json:"meta_env,omitempty" jsonschema:"an environment variable whose value the first request's _meta and metadata carry (env), as a server leaking a secret would"`
}

// consultAdd is the tool the model is offered.
var consultAdd = &mcp.Tool{Name: "add", Description: "Adds two numbers.",
	InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`)}

// Keys of the consult tool's two rounds in a tool result's InputRequests.
const (
	consultFirst  = "consult-first"
	consultSecond = "consult-second"
)

func addConsultTool(srv *mcp.Server) {
	mcp.AddTool(srv, &mcp.Tool{Name: "consult", Description: "Asks the client's model a question, offering it the tool add (sampling with tools); returns the tool uses and the answer."}, consult)
}

// consult runs both rounds. Before protocol 2026-07-28 it sends them as
// requests of its own; from then on it returns each as InputRequests, the
// first round's answer kept in the request state the client echoes.
func consult(ctx context.Context, req *mcp.CallToolRequest, in consultArgs) (*mcp.CallToolResult, any, error) {
	if in.ToolChoice == "" {
		in.ToolChoice = "required"
	}
	ip := req.Session.InitializeParams()
	if ip == nil || ip.Capabilities == nil || ip.Capabilities.Sampling == nil || ip.Capabilities.Sampling.Tools == nil {
		return nil, nil, errors.New("the client does not declare sampling with tools")
	}
	first := &mcp.CreateMessageWithToolsParams{MaxTokens: 100, Tools: []*mcp.Tool{consultAdd},
		ToolChoice: &mcp.ToolChoice{Mode: in.ToolChoice},
		Messages:   []*mcp.SamplingMessageV2{{Role: "user", Content: []mcp.Content{&mcp.TextContent{Text: in.Question}}}}}
	if meta := envMeta(in.MetaEnv); meta != nil {
		first.Meta, first.Metadata = meta, map[string]any(meta)
	}
	if ip.ProtocolVersion < mrtrVersion {
		r1, err := req.Session.CreateMessageWithTools(ctx, first)
		if err != nil {
			return nil, nil, err
		}
		second, results := consultSecondRound(first, r1)
		if second == nil {
			return consultReport(r1, nil, r1), nil, nil
		}
		r2, err := req.Session.CreateMessageWithTools(ctx, second)
		if err != nil {
			return nil, nil, err
		}
		return consultReport(r1, results, r2), nil, nil
	}
	responses := req.Params.InputResponses
	if r2, ok := responses[consultSecond].(*mcp.CreateMessageWithToolsResult); ok {
		var r1 mcp.CreateMessageWithToolsResult
		if err := json.Unmarshal([]byte(req.Params.RequestState), &r1); err != nil {
			return nil, nil, fmt.Errorf("reading the request state: %w", err)
		}
		_, results := consultSecondRound(first, &r1)
		return consultReport(&r1, results, r2), nil, nil
	}
	r1, ok := responses[consultFirst].(*mcp.CreateMessageWithToolsResult)
	if !ok {
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{consultFirst: first}}, nil, nil
	}
	second, _ := consultSecondRound(first, r1)
	if second == nil {
		return consultReport(r1, nil, r1), nil, nil
	}
	state, err := json.Marshal(r1)
	if err != nil {
		return nil, nil, err
	}
	return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{consultSecond: second}, RequestState: string(state)}, nil, nil
}

// consultSecondRound runs the tool uses of the model's first answer and
// returns the request asking again with their results (tool choice none),
// or nil when the model used no tool.
func consultSecondRound(first *mcp.CreateMessageWithToolsParams, r1 *mcp.CreateMessageWithToolsResult) (*mcp.CreateMessageWithToolsParams, []*mcp.ToolResultContent) {
	var results []*mcp.ToolResultContent
	var blocks []mcp.Content
	for _, c := range r1.Content {
		use, ok := c.(*mcp.ToolUseContent)
		if !ok {
			continue
		}
		r := &mcp.ToolResultContent{ToolUseID: use.ID}
		a, aok := use.Input["a"].(float64)
		b, bok := use.Input["b"].(float64)
		switch {
		case use.Name != consultAdd.Name:
			r.IsError, r.Content = true, []mcp.Content{&mcp.TextContent{Text: "no such tool: " + use.Name}}
		case !aok || !bok:
			r.IsError, r.Content = true, []mcp.Content{&mcp.TextContent{Text: "add needs numbers a and b"}}
		default:
			r.Content = []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(a + b)}}
		}
		results = append(results, r)
		blocks = append(blocks, r)
	}
	if len(results) == 0 {
		return nil, nil
	}
	second := *first
	second.ToolChoice = &mcp.ToolChoice{Mode: "none"}
	second.Messages = append(append([]*mcp.SamplingMessageV2{}, first.Messages...),
		&mcp.SamplingMessageV2{Role: "assistant", Content: r1.Content},
		&mcp.SamplingMessageV2{Role: "user", Content: blocks})
	return &second, results
}

// consultReport is the tool's answer: the first round's tool uses, their
// results and the last round's text.
func consultReport(r1 *mcp.CreateMessageWithToolsResult, results []*mcp.ToolResultContent, last *mcp.CreateMessageWithToolsResult) *mcp.CallToolResult {
	var lines []string
	for _, c := range r1.Content {
		if use, ok := c.(*mcp.ToolUseContent); ok {
			input, _ := json.Marshal(use.Input)
			lines = append(lines, fmt.Sprintf("tool_use %s %s %s", use.ID, use.Name, input))
		}
	}
	for _, r := range results {
		text := ""
		if len(r.Content) > 0 {
			if t, ok := r.Content[0].(*mcp.TextContent); ok {
				text = t.Text
			}
		}
		lines = append(lines, fmt.Sprintf("tool_result %s %s", r.ToolUseID, text))
	}
	var answer []string
	for _, c := range last.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			answer = append(answer, t.Text)
		}
	}
	lines = append(lines, "answer: "+strings.Join(answer, " "), "stop_reason: "+last.StopReason)
	return textResult(strings.Join(lines, "\n"))
}
