package runtime

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/internal/exampleserver"
	"github.com/openprogram/mcpvisor/internal/testutil"
)

// streamCounts asks the example server how many resource subscription
// streams it has open and how many were asked for in all (end_subscriptions
// with keep ends none).
func streamCounts(t *testing.T, rt *testRuntime, server string) (open, opened int) {
	t.Helper()
	res := mustCall(t, rt, server+"__end_subscriptions", map[string]any{"keep": true})
	var ended int
	if len(res.Content) != 1 {
		t.Fatalf("end_subscriptions answered %+v", res)
	}
	if _, err := fmt.Sscanf(res.Content[0].Text, "ended %d, open %d, opened %d", &ended, &open, &opened); err != nil {
		t.Fatalf("end_subscriptions answered %q: %v", res.Content[0].Text, err)
	}
	return open, opened
}

// TestSubscriptionStreamReopened: on protocol 2026-07-28, over stdio and
// Streamable HTTP, a subscription stream the server ends inside a live
// session is opened again, and the resource's updates keep arriving; a
// server that refuses every new stream gets a bounded number of attempts
// (the first stream and mcpconn's five quick reopens), then a warning,
// and no more until the next session.
func TestSubscriptionStreamReopened(t *testing.T) {
	srv := exampleserver.NewServer(exampleserver.Options{Protocol: "2026-07-28", UpdateTool: true})
	// 2026-07-28 is served over HTTP by stateless handlers only.
	web := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(web.Close)
	for _, tc := range []struct {
		name string
		srv  config.Server
	}{
		{"stdio", exampleServer("ex", "-update-tool", "-protocol", "2026-07-28")},
		{"streamable", config.Server{Name: "ex", Type: config.TypeHTTP, URL: web.URL, Enabled: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := start(t, Options{}, tc.srv)
			rt.waitReady(t, "ex")
			sub := rt.subscribe(t, "ex")
			s, err := rt.SubscribeResource(t.Context(), "ex", "demo://notes/7")
			if err != nil {
				t.Fatalf("SubscribeResource: %v", err)
			}
			defer s.Close()
			testutil.Eventually(t, 10*time.Second, "the server's stream of the note", func() bool {
				open, _ := streamCounts(t, rt, "ex")
				return open == 1
			})
			updateUntilSeen(t, rt, sub, "ex", "7")

			// The server ends the stream: it is opened again.
			if res := mustCall(t, rt, "ex__end_subscriptions", map[string]any{}); !strings.HasPrefix(res.Content[0].Text, "ended 1,") {
				t.Fatalf("end_subscriptions: %q", res.Content[0].Text)
			}
			testutil.Eventually(t, 10*time.Second, "a second stream of the note", func() bool {
				open, opened := streamCounts(t, rt, "ex")
				return open == 1 && opened == 2
			})
			updateUntilSeen(t, rt, sub, "ex", "7")

			// The server ends it and refuses every new one: five quick
			// reopens in all (one spent above), then the runtime waits for
			// the next session, and says so.
			mustCall(t, rt, "ex__end_subscriptions", map[string]any{"refuse": true})
			testutil.Eventually(t, 30*time.Second, "the warning that the stream is given up", func() bool {
				return strings.Contains(rt.logs.String(), "reopened at the next session only")
			})
			if open, opened := streamCounts(t, rt, "ex"); open != 0 || opened != 6 {
				t.Fatalf("after giving up: %d streams open, %d asked for; want 0 and 6", open, opened)
			}
			if n := strings.Count(rt.logs.String(), "reopened at the next session only"); n != 1 {
				t.Errorf("the warning was logged %d times, want once", n)
			}
		})
	}
}
