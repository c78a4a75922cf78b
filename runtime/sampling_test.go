package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// toolModel is a host model that uses the tools a server offers: asked
// without a tool result in the conversation it wants add called; asked
// with one it answers with the result. It records every request.
type toolModel struct {
	mu   sync.Mutex
	seen []SamplingRequest
}

func (m *toolModel) sample(_ context.Context, req SamplingRequest) (SamplingResult, error) {
	m.mu.Lock()
	m.seen = append(m.seen, req)
	m.mu.Unlock()
	last := req.Messages[len(req.Messages)-1]
	for _, b := range last.Blocks {
		if r := b.ToolResult; r != nil && len(r.Content) == 1 {
			return SamplingResult{Model: "fake", Text: "2 + 3 = " + r.Content[0].Text, StopReason: "endTurn"}, nil
		}
	}
	return SamplingResult{Model: "fake", Text: "let me add",
		ToolUses: []SamplingToolUse{{ID: "use-1", Name: "add", Input: json.RawMessage(`{"a":2,"b":3}`)}}}, nil
}

func (m *toolModel) requests() []SamplingRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]SamplingRequest(nil), m.seen...)
}

// Sampling with tools over stdio, on both ways a server asks (requests of
// its own before 2026-07-28, InputRequests from then on): the tools and
// the tool choice reach the host's sampler, its tool use goes back as a
// tool_use block, and the second round's conversation carries the
// assistant's tool use and the user's tool result as blocks.
func TestSamplingWithTools(t *testing.T) {
	for _, protocol := range []string{"", "2025-11-25"} {
		t.Run("protocol "+protocol, func(t *testing.T) {
			var flags []string
			if protocol != "" {
				flags = []string{"-protocol", protocol}
			}
			model := &toolModel{}
			rt := start(t, Options{Sample: model.sample}, exampleServer("ex", flags...))
			rt.waitReady(t, "ex")
			res, err := rt.CallTool(t.Context(), "ex__consult", map[string]any{"question": "what is 2 + 3?"})
			if err != nil || res.IsError || len(res.Content) != 1 {
				t.Fatalf("consult: %+v, %v", res, err)
			}
			want := "tool_use use-1 add {\"a\":2,\"b\":3}\ntool_result use-1 5\nanswer: 2 + 3 = 5\nstop_reason: endTurn"
			if got := res.Content[0].Text; got != want {
				t.Errorf("the server saw\n%s\nwant\n%s", got, want)
			}
			seen := model.requests()
			if len(seen) != 2 {
				t.Fatalf("the model was asked %d times, want twice", len(seen))
			}
			first, second := seen[0], seen[1]
			if first.Server != "ex" || first.ToolChoice != ToolChoiceRequired || len(first.Tools) != 1 ||
				first.Tools[0].Name != "add" || first.Tools[0].Description != "Adds two numbers." ||
				!strings.Contains(string(first.Tools[0].InputSchema), `"required":["a","b"]`) {
				t.Errorf("first request: %+v, want the tool add with its schema and tool choice required", first)
			}
			if len(first.Messages) != 1 || first.Messages[0].Content.Text != "what is 2 + 3?" || len(first.Messages[0].Blocks) != 1 ||
				first.Messages[0].Blocks[0].Content.Text != "what is 2 + 3?" {
				t.Errorf("first request's messages: %+v, want the question as Content and its one block", first.Messages)
			}
			if second.ToolChoice != ToolChoiceNone || len(second.Messages) != 3 {
				t.Fatalf("second request: %+v, want tool choice none and three messages", second)
			}
			asked := second.Messages[1]
			if asked.Role != "assistant" || len(asked.Blocks) != 2 || asked.Blocks[0].Content.Text != "let me add" ||
				asked.Blocks[1].ToolUse == nil || asked.Blocks[1].ToolUse.ID != "use-1" || asked.Blocks[1].ToolUse.Name != "add" ||
				string(asked.Blocks[1].ToolUse.Input) != `{"a":2,"b":3}` {
				t.Errorf("the assistant's message: %+v, want its text and its tool use", asked)
			}
			answered := second.Messages[2]
			if answered.Role != "user" || len(answered.Blocks) != 1 || answered.Blocks[0].ToolResult == nil {
				t.Fatalf("the user's message: %+v, want one tool result", answered)
			}
			if r := answered.Blocks[0].ToolResult; r.ToolUseID != "use-1" || r.IsError || len(r.Content) != 1 || r.Content[0].Text != "5" {
				t.Errorf("tool result: %+v, want use-1's sum 5", r)
			}
			if answered.Content.Text != "[unsupported content: tool_result]" {
				t.Errorf("the tool result message's Content = %+v, want the single-block view a host without tools reads", answered.Content)
			}
		})
	}
}

// A host model that ignores the tools offered keeps working: its text
// answer reaches the server.
func TestSamplingToolsIgnored(t *testing.T) {
	rt := start(t, Options{Sample: func(_ context.Context, req SamplingRequest) (SamplingResult, error) {
		return SamplingResult{Model: "plain", Text: "five"}, nil
	}}, exampleServer("ex"))
	rt.waitReady(t, "ex")
	res, err := rt.CallTool(t.Context(), "ex__consult", map[string]any{"question": "2 + 3?", "tool_choice": "auto"})
	if err != nil || res.IsError || len(res.Content) != 1 {
		t.Fatalf("consult: %+v, %v", res, err)
	}
	if got := res.Content[0].Text; got != "answer: five\nstop_reason: " {
		t.Errorf("the server saw %q, want the plain answer", got)
	}
}

// The host's answer is checked against the request: a tool use the request
// did not offer, or forbade, never reaches the server as a tool_use block.
func TestSamplingResultChecks(t *testing.T) {
	offered := SamplingRequest{Tools: []SamplingTool{{Name: "add"}}}
	use := func(id, name, input string) SamplingToolUse {
		return SamplingToolUse{ID: id, Name: name, Input: json.RawMessage(input)}
	}
	for _, tc := range []struct {
		name string
		in   SamplingRequest
		uses []SamplingToolUse
		ok   bool
	}{
		{"offered", offered, []SamplingToolUse{use("1", "add", `{"a":1}`), use("2", "add", "")}, true},
		{"no tools offered", SamplingRequest{}, []SamplingToolUse{use("1", "add", `{}`)}, false},
		{"tool choice none", SamplingRequest{Tools: offered.Tools, ToolChoice: ToolChoiceNone}, []SamplingToolUse{use("1", "add", `{}`)}, false},
		{"not offered", offered, []SamplingToolUse{use("1", "rm", `{}`)}, false},
		{"no id", offered, []SamplingToolUse{use("", "add", `{}`)}, false},
		{"the same id twice", offered, []SamplingToolUse{use("1", "add", `{}`), use("1", "add", `{}`)}, false},
		{"input not an object", offered, []SamplingToolUse{use("1", "add", `[1]`)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := samplingResult(tc.in, SamplingResult{Model: "m", ToolUses: tc.uses})
			if !tc.ok {
				if !errors.Is(err, errBadToolUse) {
					t.Fatalf("err = %v, want errBadToolUse", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			// Only tool uses: no empty text block before them.
			if res.StopReason != StopReasonToolUse || len(res.Content) != len(tc.uses) {
				t.Fatalf("result %+v, want stop reason toolUse and %d tool_use blocks", res, len(tc.uses))
			}
			raw, _ := json.Marshal(res)
			if want := `"content":[{"type":"tool_use","id":"1","name":"add","input":{"a":1}},{"type":"tool_use","id":"2","name":"add","input":{}}]`; !strings.Contains(string(raw), want) {
				t.Errorf("on the wire %s, want %s", raw, want)
			}
		})
	}
}

// A tool choice mode the spec does not know is refused with an error
// naming it, before the host sees the request.
func TestSamplingUnknownToolChoice(t *testing.T) {
	_, err := samplingRequest("ex", &mcp.CreateMessageWithToolsParams{ToolChoice: &mcp.ToolChoice{Mode: "always"}})
	if err == nil || !strings.Contains(err.Error(), `"always"`) {
		t.Errorf("err = %v, want one naming the mode", err)
	}
}

// The request gate bounds the tools a server offers: more than MaxTools
// is refused naming the limit, and the host sees only the request within
// it.
func TestSamplingMaxTools(t *testing.T) {
	var mu sync.Mutex
	var offered []int
	rt := start(t, Options{
		Sample: func(_ context.Context, req SamplingRequest) (SamplingResult, error) {
			mu.Lock()
			offered = append(offered, len(req.Tools))
			mu.Unlock()
			return SamplingResult{Text: "ok"}, nil
		},
		ServerRequests: ServerRequestLimits{MaxTools: 5, PerMinute: -1},
	}, legacyAsker())
	rt.waitReady(t, "ex")
	if got := askTools(t, rt, 6); !strings.Contains(got, "limit max_tools") || !strings.Contains(got, "offers 6 tools, over the limit of 5") {
		t.Errorf("6 tools: the server saw %q, want a max_tools refusal", got)
	}
	if got := askTools(t, rt, 5); got != "ok: 1" {
		t.Errorf("5 tools: the server saw %q, want it answered", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(offered) != 1 || offered[0] != 5 {
		t.Errorf("the host saw requests offering %v tools, want only the one of 5", offered)
	}
	if n := mustStatus(t, rt, "ex").RequestsRefused; n != 1 {
		t.Errorf("requests_refused = %d, want 1", n)
	}
}

// The tools offered, with their schemas, count towards MaxBytes: 100
// tools (about 60 bytes of JSON each) are over 4096 bytes, within the
// default MaxTools.
func TestSamplingToolsCountTowardsMaxBytes(t *testing.T) {
	rt := start(t, Options{Sample: func(context.Context, SamplingRequest) (SamplingResult, error) {
		return SamplingResult{}, fmt.Errorf("must not be called")
	}, ServerRequests: ServerRequestLimits{MaxBytes: 4096, PerMinute: -1}}, legacyAsker())
	rt.waitReady(t, "ex")
	if got := askTools(t, rt, 100); !strings.Contains(got, "limit max_bytes") {
		t.Errorf("100 tools: the server saw %q, want a max_bytes refusal", got)
	}
}

// askTools has the example server's ask tool send one sampling request
// offering tools tools, and returns its report.
func askTools(t *testing.T, rt *testRuntime, tools int) string {
	t.Helper()
	res, err := rt.CallTool(t.Context(), "ex__ask", map[string]any{"kind": "sampling", "count": 1, "tools": tools})
	if err != nil || len(res.Content) != 1 {
		t.Fatalf("ask with %d tools: %+v, %v", tools, res, err)
	}
	return res.Content[0].Text
}
