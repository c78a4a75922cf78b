//go:build unix

package peers_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/prompts"
	"github.com/openprogram/mcpvisor/runtime"
)

// subscribedDoc is one of server-everything's static resources.
const subscribedDoc = "demo://resource/static/document/architecture.md"

// TestEverythingCompletionsAndSubscriptions: on every transport,
// completable-prompt's completions narrow as the value grows (its name
// argument depends on the department in the context), and after
// subscribing to a resource, toggle-subscriber-updates (which sends an
// update of every subscribed URI at once) delivers a resource_updated
// event; the same over the management API (everythingOverHTTP).
func TestEverythingCompletionsAndSubscriptions(t *testing.T) {
	for _, transport := range []string{"stdio", "sse", "streamableHttp"} {
		t.Run(transport, func(t *testing.T) {
			srv, keep := everythingServer(t, transport)
			rt := startRuntime(t, keep, srv)
			rt.waitReady(t, "everything")
			testutil.Eventually(t, toolsTimeout, "completable-prompt in the prompt registry", func() bool {
				return slices.ContainsFunc(rt.Prompts(), func(p prompts.Prompt) bool { return p.Name == "everything__completable-prompt" })
			})

			ref := runtime.CompletionRef{Prompt: "everything__completable-prompt"}
			for _, tc := range []struct {
				arg, value string
				others     map[string]string
				want       []string
			}{
				{"department", "", nil, []string{"Engineering", "Sales", "Marketing", "Support"}},
				{"department", "S", nil, []string{"Sales", "Support"}},
				{"department", "Su", nil, []string{"Support"}},
				{"name", "", map[string]string{"department": "Engineering"}, []string{"Alice", "Bob", "Charlie"}},
				{"name", "B", map[string]string{"department": "Engineering"}, []string{"Bob"}},
				{"name", "", map[string]string{"department": "Sales"}, []string{"David", "Eve", "Frank"}},
			} {
				ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
				got, err := rt.Complete(ctx, ref, tc.arg, tc.value, tc.others)
				cancel()
				if err != nil {
					t.Fatalf("Complete(%s=%q, %v): %v", tc.arg, tc.value, tc.others, err)
				}
				if !slices.Equal(got.Values, tc.want) {
					t.Errorf("Complete(%s=%q, %v) = %v, want %v", tc.arg, tc.value, tc.others, got.Values, tc.want)
				}
			}

			sub := rt.Subscribe(events.SubscribeOptions{Server: "everything", Buffer: 1 << 14})
			defer sub.Close()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			rs, err := rt.SubscribeResource(ctx, "everything", subscribedDoc)
			if err != nil {
				t.Fatalf("SubscribeResource: %v", err)
			}
			rt.call(t, "everything__toggle-subscriber-updates", map[string]any{})
			testutil.Await(t, sub, 10*time.Second, "a resource_updated of "+subscribedDoc, func(u events.ResourceUpdated) bool {
				return u.URI == subscribedDoc
			})
			rt.call(t, "everything__toggle-subscriber-updates", map[string]any{}) // off again
			if err := rs.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			everythingOverHTTP(t, rt)
		})
	}
}
