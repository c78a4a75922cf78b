package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/adapter"
	"github.com/openprogram/mcpvisor/tools"
)

// SamplingRequest is a server asking the host's model for a completion
// (sampling/createMessage). Since MCP 2025-11-25 a server may offer the
// model tools of its own (Tools, ToolChoice): the model may answer with
// tool uses (SamplingResult.ToolUses), the server runs them and asks
// again with their results in the conversation. A host that ignores Tools
// and answers with text keeps working.
type SamplingRequest struct {
	// Server is the configured name of the asking server.
	Server string
	// Messages is the conversation to complete, content converted as tool
	// results are (images keep their bytes).
	Messages      []SamplingMessage
	SystemPrompt  string
	MaxTokens     int64
	Temperature   float64
	StopSequences []string
	// ModelHints are the server's model name hints, most preferred first.
	ModelHints []string
	// Tools are the tools the server offers the model, if any. They are
	// the server's: the host never calls them, it passes the model's wish
	// to call one back (SamplingResult.ToolUses).
	Tools []SamplingTool
	// ToolChoice is how the model must use Tools: ToolChoiceAuto,
	// ToolChoiceRequired, ToolChoiceNone, or "" when the server did not
	// say (the spec's default is auto).
	ToolChoice string
}

// The tool choices of a SamplingRequest, as MCP names them.
const (
	// ToolChoiceAuto: the model decides whether to use a tool.
	ToolChoiceAuto = "auto"
	// ToolChoiceRequired: the model must use at least one tool.
	ToolChoiceRequired = "required"
	// ToolChoiceNone: the model must not use a tool.
	ToolChoiceNone = "none"
)

// StopReasonToolUse is a SamplingResult's stop reason when the model
// wants tools called.
const StopReasonToolUse = "toolUse"

// SamplingTool is one tool a server offers the model in a sampling
// request.
type SamplingTool struct {
	// Name is what the model calls the tool by in its tool use.
	Name string
	// Description tells the model what the tool does.
	Description string
	// InputSchema is the JSON Schema of the tool's input, as the server
	// sent it (re-encoded by the SDK).
	InputSchema json.RawMessage
}

// SamplingMessage is one message of a SamplingRequest.
type SamplingMessage struct {
	Role string // "user" or "assistant"
	// Content is the message's first block, converted as tool results are:
	// the whole message for the single text or image block every message
	// had before MCP 2025-11-25. A tool use or tool result block reads here
	// as a line of text; Blocks has them.
	Content tools.Content
	// Blocks are all of the message's blocks in order (Content is the
	// first), so a host can pass a 2025-11-25 message on as model APIs take
	// it: text, images, the assistant's tool uses and the user's tool
	// results.
	Blocks []SamplingBlock
}

// SamplingBlock is one block of a SamplingMessage: a tool use (ToolUse
// set), a tool result (ToolResult set), or else text, an image or any
// other block, converted as tool results are (Content).
type SamplingBlock struct {
	Content    tools.Content
	ToolUse    *SamplingToolUse
	ToolResult *SamplingToolResult
}

// SamplingToolUse is the model asking for a tool of the request to be
// called: in an assistant message of the conversation, or in the model's
// answer (SamplingResult.ToolUses).
type SamplingToolUse struct {
	// ID names this use; the tool's result refers to it.
	ID string
	// Name is the tool's name, one of the request's Tools.
	Name string
	// Input is the tool's arguments, a JSON object. Empty means {}.
	Input json.RawMessage
}

// SamplingToolResult is the result of a tool use, in a user message.
type SamplingToolResult struct {
	// ToolUseID is the ID of the SamplingToolUse it answers.
	ToolUseID string
	// Content is the result, converted as tool results are.
	Content []tools.Content
	// StructuredContent is the structured result as JSON, if any.
	StructuredContent json.RawMessage
	// IsError says the tool failed; Content says how.
	IsError bool
}

// SamplingResult is the host model's answer.
type SamplingResult struct {
	// Text is the completion; it may be empty when the model only asks for
	// tools.
	Text string
	// Model names the model that answered.
	Model string
	// StopReason is why it stopped ("endTurn", "maxTokens", ...), if known;
	// with ToolUses it defaults to StopReasonToolUse.
	StopReason string
	// ToolUses are the tools the model wants the server to call, each one
	// of the request's Tools with a unique ID; they go back as tool_use
	// blocks after the text. A request without tools, or whose ToolChoice
	// is none, must not get any: the server gets an error instead.
	ToolUses []SamplingToolUse
}

// sampler adapts Options.Sample to the SDK's handler.
func sampler(f func(context.Context, SamplingRequest) (SamplingResult, error)) func(context.Context, string, *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
	if f == nil {
		return nil
	}
	return func(ctx context.Context, server string, req *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
		in, err := samplingRequest(server, req.Params)
		if err != nil {
			return nil, err
		}
		out, err := f(ctx, in)
		if err != nil {
			return nil, err
		}
		return samplingResult(in, out)
	}
}

// samplingRequest converts a server's request into the host's.
func samplingRequest(server string, p *mcp.CreateMessageWithToolsParams) (SamplingRequest, error) {
	if p == nil {
		return SamplingRequest{}, errors.New("sampling request without parameters")
	}
	in := SamplingRequest{Server: server, SystemPrompt: p.SystemPrompt, MaxTokens: p.MaxTokens,
		Temperature: p.Temperature, StopSequences: p.StopSequences}
	for _, m := range p.Messages {
		if m != nil {
			in.Messages = append(in.Messages, samplingMessage(m))
		}
	}
	if p.ModelPreferences != nil {
		for _, h := range p.ModelPreferences.Hints {
			if h != nil && h.Name != "" {
				in.ModelHints = append(in.ModelHints, h.Name)
			}
		}
	}
	for _, t := range p.Tools {
		if t != nil {
			in.Tools = append(in.Tools, SamplingTool{Name: t.Name, Description: t.Description, InputSchema: encoded(t.InputSchema)})
		}
	}
	if p.ToolChoice != nil {
		switch mode := p.ToolChoice.Mode; mode {
		case "", ToolChoiceAuto, ToolChoiceRequired, ToolChoiceNone:
			in.ToolChoice = mode
		default:
			return SamplingRequest{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
				Message: fmt.Sprintf("toolChoice mode %.40q is none of auto, required, none", mode)}
		}
	}
	return in, nil
}

func samplingMessage(m *mcp.SamplingMessageV2) SamplingMessage {
	out := SamplingMessage{Role: string(m.Role)}
	var first mcp.Content
	if len(m.Content) > 0 {
		first = m.Content[0]
	}
	out.Content = adapter.ConvertContent(first)
	for _, c := range m.Content {
		var b SamplingBlock
		switch c := c.(type) {
		case *mcp.ToolUseContent:
			if c != nil {
				b.ToolUse = &SamplingToolUse{ID: c.ID, Name: c.Name, Input: toolInput(c.Input)}
			}
		case *mcp.ToolResultContent:
			if c != nil {
				r := &SamplingToolResult{ToolUseID: c.ToolUseID, IsError: c.IsError, Content: []tools.Content{}}
				for _, rc := range c.Content {
					r.Content = append(r.Content, adapter.ConvertContent(rc))
				}
				if c.StructuredContent != nil {
					r.StructuredContent = encoded(c.StructuredContent)
				}
				b.ToolResult = r
			}
		}
		if b.ToolUse == nil && b.ToolResult == nil {
			b.Content = adapter.ConvertContent(c)
		}
		out.Blocks = append(out.Blocks, b)
	}
	return out
}

// toolInput is a tool use's arguments as JSON; none is {}.
func toolInput(in map[string]any) json.RawMessage {
	if len(in) == 0 {
		return json.RawMessage(`{}`)
	}
	return encoded(in)
}

// encoded re-encodes a value the SDK decoded from JSON (so it encodes);
// nil for none.
func encoded(v any) json.RawMessage {
	if v == nil {
		return nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return raw
}

// errBadToolUse is the host's sampler answering with a tool use the
// request does not allow. The server gets it as an error rather than a
// tool_use block it did not ask for.
var errBadToolUse = errors.New("the host's model answered with a tool use the request does not allow")

// samplingResult converts the host's answer for the server: the text
// block (unless the model only asks for tools), then a tool_use block per
// tool use, each checked against what the request offered.
func samplingResult(in SamplingRequest, out SamplingResult) (*mcp.CreateMessageWithToolsResult, error) {
	res := &mcp.CreateMessageWithToolsResult{Role: "assistant", Model: out.Model, StopReason: out.StopReason}
	if out.Text != "" || len(out.ToolUses) == 0 {
		res.Content = append(res.Content, &mcp.TextContent{Text: out.Text})
	}
	if len(out.ToolUses) == 0 {
		return res, nil
	}
	if len(in.Tools) == 0 || in.ToolChoice == ToolChoiceNone {
		return nil, fmt.Errorf("%w: it offered no tools or tool choice none", errBadToolUse)
	}
	offered := map[string]bool{}
	for _, t := range in.Tools {
		offered[t.Name] = true
	}
	ids := map[string]bool{}
	for _, u := range out.ToolUses {
		if !offered[u.Name] {
			return nil, fmt.Errorf("%w: no tool %.80q was offered", errBadToolUse, u.Name)
		}
		if u.ID == "" || ids[u.ID] {
			return nil, fmt.Errorf("%w: a use of %.80q without an ID of its own", errBadToolUse, u.Name)
		}
		ids[u.ID] = true
		var input map[string]any
		if len(u.Input) > 0 {
			if err := json.Unmarshal(u.Input, &input); err != nil || input == nil {
				return nil, fmt.Errorf("%w: the input of %.80q is not a JSON object", errBadToolUse, u.Name)
			}
		}
		res.Content = append(res.Content, &mcp.ToolUseContent{ID: u.ID, Name: u.Name, Input: input})
	}
	if res.StopReason == "" {
		res.StopReason = StopReasonToolUse
	}
	return res, nil
}
