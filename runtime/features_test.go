package runtime

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/openprogram/mcpvisor/prompts"
	"github.com/openprogram/mcpvisor/status"
)

// toolNames returns the registry's tool names of server.
func toolNames(rt *testRuntime, server string) []string {
	var out []string
	for _, t := range rt.Tools() {
		if t.Server == server {
			out = append(out, t.Name)
		}
	}
	return out
}

// The example server declares prompts and resources: its resource and
// prompt tools appear, its prompt reaches the prompt registry and renders,
// and its resources read through the tools.
func TestPromptsAndResources(t *testing.T) {
	rt := start(t, Options{}, exampleServer("ex"))
	rt.waitReady(t, "ex")
	names := toolNames(rt, "ex")
	for _, want := range []string{"ex__list_resources", "ex__read_resource", "ex__list_prompts", "ex__get_prompt"} {
		if !slices.Contains(names, want) {
			t.Errorf("tool %s missing: %v", want, names)
		}
	}
	rt.awaitCatalog(t, "ex", "the greet prompt", func() bool { _, ok := rt.prompts.Get("ex__greet"); return ok })
	list := rt.Prompts()
	if len(list) != 1 || list[0].OriginalName != "greet" || len(list[0].Arguments) == 0 || !list[0].Arguments[0].Required {
		t.Fatalf("prompts = %+v", list)
	}
	if st := mustStatus(t, rt, "ex"); st.PromptCount != 1 {
		t.Errorf("prompt_count = %d, want 1", st.PromptCount)
	}
	r, err := rt.GetPrompt(context.Background(), "ex__greet", map[string]string{"name": "Ada", "style": "warmly"})
	if err != nil || len(r.Messages) != 1 || r.Messages[0].Role != "user" || !strings.Contains(r.Messages[0].Content.Text, "Ada") {
		t.Fatalf("GetPrompt = %+v, %v", r, err)
	}
	var missing *prompts.ArgumentError
	if _, err := rt.GetPrompt(context.Background(), "ex__greet", nil); !errors.As(err, &missing) || missing.Argument != "name" {
		t.Errorf("GetPrompt without name = %v, want an ArgumentError naming it", err)
	}
	if _, err := rt.GetPrompt(context.Background(), "ex__nope", nil); !errors.Is(err, prompts.ErrUnknownPrompt) {
		t.Errorf("unknown prompt: %v", err)
	}

	res := mustCall(t, rt, "ex__list_resources", map[string]any{})
	if !strings.Contains(res.Content[0].Text, "demo://readme") || !strings.Contains(res.Content[0].Text, "demo://notes/{id}") {
		t.Errorf("list_resources = %s", res.Content[0].Text)
	}
	res = mustCall(t, rt, "ex__read_resource", map[string]any{"uri": "demo://notes/7"})
	if res.Content[0].Text != "note 7" {
		t.Errorf("read_resource = %+v", res)
	}
	res = mustCall(t, rt, "ex__get_prompt", map[string]any{"name": "greet", "arguments": map[string]any{"name": "Bo"}})
	if !strings.HasPrefix(res.Content[0].Text, "user: ") || !strings.Contains(res.Content[0].Text, "Bo") {
		t.Errorf("get_prompt = %+v", res)
	}

	// Over HTTP.
	api := newAPI(t, rt)
	var got struct{ Prompts []prompts.Prompt }
	api.do("GET", "/api/mcp/prompts", "").want(t, 200).decode(t, &got)
	if len(got.Prompts) != 1 || got.Prompts[0].Name != "ex__greet" {
		t.Errorf("GET prompts = %+v", got)
	}
	var rendered prompts.Rendered
	api.do("POST", "/api/mcp/prompts/ex__greet/get", `{"arguments": {"name": "Cy"}}`).want(t, 200).decode(t, &rendered)
	if len(rendered.Messages) != 1 || !strings.Contains(rendered.Messages[0].Content.Text, "Cy") {
		t.Errorf("POST get = %+v", rendered)
	}
	if e := api.do("POST", "/api/mcp/prompts/ex__greet/get", `{}`).want(t, 400).apiError(t); e.Field != "arguments.name" {
		t.Errorf("missing argument answered %+v", e)
	}
	api.do("POST", "/api/mcp/prompts/ex__nope/get", `{}`).want(t, 404)
	api.do("POST", "/api/mcp/prompts/ex__greet/get", `{"arguments": {"name": 3}}`).want(t, 400)

	// Gone with the server.
	if _, err := rt.PatchServer(context.Background(), "ex", []byte(`{"enabled": false}`)); err != nil {
		t.Fatal(err)
	}
	if len(rt.Prompts()) != 0 {
		t.Error("prompts of a disabled server are still listed")
	}
}

// list_changed: the server adds a tool and a prompt while connected; the
// registrations follow without a reconnect.
func TestListChangedSwapsRegistrations(t *testing.T) {
	rt := start(t, Options{}, exampleServer("ex", "-change-tool"))
	rt.waitReady(t, "ex")
	rt.awaitCatalog(t, "ex", "the greet prompt", func() bool { return len(rt.Prompts()) == 1 })
	mustCall(t, rt, "ex__change", map[string]any{"list": "tools"})
	rt.awaitCatalog(t, "ex", "tool ex__extra_1", func() bool { return slices.Contains(toolNames(rt, "ex"), "ex__extra_1") })
	if res := mustCall(t, rt, "ex__extra_1", map[string]any{"text": "new"}); res.Content[0].Text != "new" {
		t.Errorf("extra_1 = %+v", res)
	}
	mustCall(t, rt, "ex__change", map[string]any{"list": "prompts"})
	rt.awaitCatalog(t, "ex", "prompt ex__extra_1", func() bool { _, ok := rt.prompts.Get("ex__extra_1"); return ok })
	// A burst: five changes at once end with all five tools registered.
	for range 5 {
		mustCall(t, rt, "ex__change", map[string]any{"list": "tools"})
	}
	rt.awaitCatalog(t, "ex", "tool ex__extra_6", func() bool { return slices.Contains(toolNames(rt, "ex"), "ex__extra_6") })
	st := mustStatus(t, rt, "ex")
	if st.State != status.Ready || st.Restarts != 0 || st.ToolCount != len(toolNames(rt, "ex")) {
		t.Errorf("status after changes: %+v (tools %d)", st, len(toolNames(rt, "ex")))
	}
}
