package runtime

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/tools"
)

// searchAnswerNames is the tool names of a search_tools answer's text.
func searchAnswerNames(t *testing.T, text string) []string {
	t.Helper()
	var a searchAnswer
	if err := json.Unmarshal([]byte(text), &a); err != nil {
		t.Fatalf("search_tools answer %q is not the runtime's JSON: %v", text, err)
	}
	var names []string
	for _, at := range a.Tools {
		names = append(names, at.Name)
	}
	return names
}

// With tool search on, the gateway lists search_tools and the pinned
// tools (Runtime.ModelTools less what the filter leaves out), calls an
// unlisted tool by its registry name, answers search_tools as the runtime
// does, and never shows or calls a filtered tool, in a listing, a call or
// a search answer. The listing follows the pinned set.
func TestGatewayToolSearch(t *testing.T) {
	rt := start(t, Options{ToolSearch: ToolSearch{Enabled: true, Pinned: []string{"ex__echo", "ex__env", "pin__*"}}}, exampleServer("ex"))
	rt.waitReady(t, "ex")
	g := connectGateway(t, rt, MCPServerOptions{Tools: GatewayFilter{Deny: []string{"*__env"}}})

	var want []string
	for _, tool := range rt.ModelTools() {
		if tool.Name != "ex__env" {
			want = append(want, tool.Name)
		}
	}
	slices.Sort(want) // the SDK lists by name
	if got := g.toolNames(t); !slices.Equal(got, want) || !slices.Equal(want, []string{"ex__echo", SearchToolName}) {
		t.Fatalf("gateway tools = %v, want search_tools and the pinned tools the filter allows: %v", got, want)
	}

	// An unlisted tool is called by name.
	if res := g.call(t, "ex__add", map[string]any{"a": 2, "b": 3}); res.IsError || mcpText(res) != "5" {
		t.Errorf("ex__add (unlisted) through the gateway = %+v, want 5", res)
	}
	// A name nobody registered, and a filtered tool, are unknown tools.
	for _, name := range []string{"ex__nothing", "ex__env", "other__add"} {
		_, err := g.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
		if err == nil || !strings.Contains(err.Error(), "unknown tool") {
			t.Errorf("calling %s through the gateway: %v, want an unknown tool error", name, err)
		}
	}

	// search_tools answers as the runtime's own does (same text), and
	// finds the unlisted tool.
	args := map[string]any{"query": "sum of two numbers", "limit": 3}
	direct := mustCall(t, rt, SearchToolName, args)
	res := g.call(t, SearchToolName, args)
	if res.IsError || len(direct.Content) != 1 || mcpText(res) != direct.Content[0].Text {
		t.Errorf("search_tools through the gateway = %q, want the runtime's answer %+v", mcpText(res), direct.Content)
	}
	if names := searchAnswerNames(t, mcpText(res)); len(names) == 0 || names[0] != "ex__add" {
		t.Errorf("search_tools found %v, want ex__add first", names)
	}

	// A filtered tool the runtime's search finds first (ex__env is pinned,
	// which leaves it out of answers anyway) is absent from the answers of
	// a gateway denying it, even for its exact name.
	g2 := connectGateway(t, rt, MCPServerOptions{Tools: GatewayFilter{Deny: []string{"ex__add"}}})
	if names := searchAnswerNames(t, mcpText(g2.call(t, SearchToolName, args))); slices.Contains(names, "ex__add") {
		t.Errorf("search_tools through a gateway denying ex__add answered %v", names)
	}
	if names := searchAnswerNames(t, mcpText(g2.call(t, SearchToolName, map[string]any{"query": "ex__add"}))); slices.Contains(names, "ex__add") {
		t.Errorf("search_tools for the denied tool's exact name answered %v", names)
	}
	if _, err := g2.CallTool(t.Context(), &mcp.CallToolParams{Name: "ex__add", Arguments: map[string]any{"a": 1, "b": 1}}); err == nil {
		t.Error("a gateway denying ex__add called it")
	}
	// An Allow list leaves search_tools served, answering allowed tools only.
	g3 := connectGateway(t, rt, MCPServerOptions{Tools: GatewayFilter{Allow: []string{"ex__echo", "ex__sleep"}}})
	if got := g3.toolNames(t); !slices.Equal(got, []string{"ex__echo", SearchToolName}) {
		t.Errorf("gateway allowing ex__echo and ex__sleep lists %v", got)
	}
	if names := searchAnswerNames(t, mcpText(g3.call(t, SearchToolName, map[string]any{"query": "sum sleep text", "limit": 10}))); !slices.Equal(names, []string{"ex__sleep"}) {
		t.Errorf("search_tools through a gateway allowing ex__echo (pinned) and ex__sleep answered %v, want ex__sleep only", names)
	}

	// The listing follows the pinned set: an unpinned tool appearing
	// leaves it as it was, a pinned one appearing or going changes it.
	if err := rt.Registry().SetServer("web", []tools.Tool{searchTool("web__take_screenshot", "Take a screenshot of the page.", nil)}); err != nil {
		t.Fatal(err)
	}
	if err := rt.Registry().SetServer("pin", []tools.Tool{searchTool("pin__kept", "Always at hand.", nil)}); err != nil {
		t.Fatal(err)
	}
	g.awaitTools(t, "search_tools, ex__echo and pin__kept", func(names []string) bool {
		return slices.Equal(names, []string{"ex__echo", "pin__kept", SearchToolName})
	})
	if res := g.call(t, "web__take_screenshot", map[string]any{}); res.IsError || mcpText(res) != "called web__take_screenshot" {
		t.Errorf("a tool registered after the gateway started, unlisted, = %+v", res)
	}
	if !testutil.Within(searchWait, func() bool {
		return slices.Contains(searchAnswerNames(t, mcpText(g.call(t, SearchToolName, map[string]any{"query": "capture the screen"}))), "web__take_screenshot")
	}) {
		t.Error("search_tools through the gateway never found a tool registered after it started")
	}
	rt.Registry().RemoveServer("pin")
	g.awaitTools(t, "search_tools and ex__echo", func(names []string) bool {
		return slices.Equal(names, []string{"ex__echo", SearchToolName})
	})
	_, err := g.CallTool(context.Background(), &mcp.CallToolParams{Name: "pin__kept", Arguments: map[string]any{}})
	if err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Errorf("calling a removed pinned tool: %v, want an unknown tool error", err)
	}
}

// Without tool search, search_tools is neither listed nor callable
// through the gateway (the runtime has none), and every tool is listed.
func TestGatewayNoToolSearch(t *testing.T) {
	rt := start(t, Options{}, exampleServer("ex"))
	rt.waitReady(t, "ex")
	g := connectGateway(t, rt, MCPServerOptions{})
	names := g.toolNames(t)
	if slices.Contains(names, SearchToolName) || !slices.Contains(names, "ex__add") {
		t.Errorf("gateway tools without tool search = %v", names)
	}
	if _, err := g.CallTool(t.Context(), &mcp.CallToolParams{Name: SearchToolName, Arguments: map[string]any{"query": "x"}}); err == nil {
		t.Error("search_tools was called through a gateway of a runtime without tool search")
	}
}
