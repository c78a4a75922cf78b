package runtime

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/testutil"
)

// promptServer is an in-memory server with the given prompts, whose
// prompts/list answers list instead when list is not nil.
func promptServer(t *testing.T, names []string, list []*mcp.Prompt) func(config.Server) mcp.Transport {
	return func(config.Server) mcp.Transport {
		srv := mcp.NewServer(&mcp.Implementation{Name: "mem", Version: "1"}, &mcp.ServerOptions{HasPrompts: true})
		for _, name := range names {
			srv.AddPrompt(&mcp.Prompt{Name: name}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{}, nil
			})
		}
		if list != nil {
			srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
				return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
					if method == "prompts/list" {
						return &mcp.ListPromptsResult{Prompts: list}, nil
					}
					return next(ctx, method, req)
				}
			})
		}
		ct, st := mcp.NewInMemoryTransports()
		if _, err := srv.Connect(context.Background(), st, nil); err != nil {
			t.Error(err)
		}
		return ct
	}
}

// A null entry in prompts/list is skipped, not a panic of the server
// actor; the change names the registered prompt.
func TestNullPromptEntryIsSkipped(t *testing.T) {
	transport := promptServer(t, []string{"p"}, []*mcp.Prompt{nil, {Name: "q"}})
	srv := config.Server{Name: "mem", Type: config.TypeLocal, Command: []string{"x"}, Enabled: true}
	rt := start(t, Options{transport: transport}, srv)
	sub := rt.subscribe(t, "")
	e := testutil.AwaitEvent(t, sub, 10*time.Second, "prompts changed or a panic", func(e events.Event) bool {
		switch e.(type) {
		case events.ActorPanicked, events.PromptsChanged:
			return true
		}
		return false
	})
	pc, ok := e.(events.PromptsChanged)
	if !ok {
		t.Fatalf("the server actor panicked: %s", e)
	}
	if pc.Count != 1 || !slices.Equal(pc.Added, []string{"mem__q"}) {
		t.Errorf("prompts changed = %s, want count 1 added [mem__q]", pc)
	}
}

// Two prompts whose names sanitise alike are one registry prompt: the
// count and the names are the registry's.
func TestPromptCountIsTheRegistrys(t *testing.T) {
	transport := promptServer(t, []string{"a.b", "a_b"}, nil)
	srv := config.Server{Name: "mem", Type: config.TypeLocal, Command: []string{"x"}, Enabled: true}
	rt := start(t, Options{transport: transport}, srv)
	sub := rt.subscribe(t, "mem")
	pc := testutil.Await(t, sub, 10*time.Second, "prompts changed", func(events.PromptsChanged) bool { return true })
	var registered []string
	for _, p := range rt.Prompts() {
		registered = append(registered, p.Name)
	}
	if pc.Count != len(registered) || !slices.Equal(pc.Added, registered) {
		t.Errorf("prompts changed = %s, registry holds %v", pc, registered)
	}
	if st, _ := rt.board.Get("mem"); st.PromptCount != len(registered) {
		t.Errorf("status prompt_count %d, registry holds %v", st.PromptCount, registered)
	}
}
