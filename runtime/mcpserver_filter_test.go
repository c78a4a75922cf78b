package runtime

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/internal/testutil"
)

// serveGateway serves a gateway of rt with opts to one in-memory client.
func serveGateway(t *testing.T, rt *testRuntime, opts MCPServerOptions) (*mirror, *gatewayClient) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	m, err := rt.serveMirror(ctx, opts)
	if err != nil {
		t.Fatalf("MCPServer: %v", err)
	}
	ct, st := mcp.NewInMemoryTransports()
	ss, err := m.srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatalf("server Connect: %v", err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	return m, dialGateway(t, ct)
}

// The tool filter covers what else a server offers: a prompt by its
// registry name, a server's resources, templates, subscriptions,
// template completions and log lines by the bare prefix "{server}__".
// Both a deny of ex__* and an allow of a__* hide all of ex's and none of
// a's; a's readme, which ex offers too, is then a's alone (unprefixed).
func TestGatewayFilterCoversEverything(t *testing.T) {
	rt := start(t, Options{}, exampleServer("a"), exampleServer("ex"))
	rt.waitReady(t, "a")
	rt.waitReady(t, "ex")
	ctx := context.Background()
	for _, f := range []GatewayFilter{{Deny: []string{"ex__*"}}, {Allow: []string{"a__*"}}} {
		t.Run(strings.Join(append(f.Allow, f.Deny...), ","), func(t *testing.T) {
			m, g := serveGateway(t, rt, MCPServerOptions{Tools: f})
			g.awaitPrompt(t, "a__greet")
			testutil.Eventually(t, 30*time.Second, "a's template served", func() bool {
				res, err := g.ListResourceTemplates(ctx, nil)
				return err == nil && len(res.ResourceTemplates) == 1 && res.ResourceTemplates[0].URITemplate == "demo://notes/{id}"
			})
			prompts, err := g.ListPrompts(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range prompts.Prompts {
				if !strings.HasPrefix(p.Name, "a__") {
					t.Errorf("the gateway lists the prompt %s", p.Name)
				}
			}
			if _, err := g.GetPrompt(ctx, &mcp.GetPromptParams{Name: "ex__greet", Arguments: map[string]string{"name": "x"}}); err == nil {
				t.Error("getting ex__greet, which the filter hides, succeeded")
			}
			if _, err := g.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "ex__greet"},
				Argument: mcp.CompleteParamsArgument{Name: "name", Value: "A"}}); err == nil {
				t.Error("completing an argument of ex__greet, which the filter hides, succeeded")
			}
			if _, err := g.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/resource", URI: GatewayURI("ex", "demo://notes/{id}")},
				Argument: mcp.CompleteParamsArgument{Name: "id", Value: "1"}}); err == nil {
				t.Error("completing ex's template, which the filter hides, succeeded")
			}
			res, err := g.ListResources(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var uris []string
			for _, r := range res.Resources {
				uris = append(uris, r.URI)
			}
			if !slices.Equal(uris, []string{"demo://readme"}) {
				t.Errorf("resources = %v, want a's readme alone, unprefixed", uris)
			}
			for _, uri := range []string{GatewayURI("ex", "demo://readme"), GatewayURI("ex", "demo://notes/7")} {
				if _, err := g.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err == nil {
					t.Errorf("reading %s, which the filter hides, succeeded", uri)
				}
				if err := m.subscribe(ctx, &mcp.SubscribeRequest{Session: firstSession(m), Params: &mcp.SubscribeParams{URI: uri}}); err == nil {
					t.Errorf("subscribing to %s, which the filter hides, succeeded", uri)
				}
			}
			if err := m.subscribe(ctx, &mcp.SubscribeRequest{Session: firstSession(m), Params: &mcp.SubscribeParams{URI: "demo://notes/7"}}); err != nil {
				t.Errorf("subscribing to a's note 7: %v", err)
			}

			// Log lines: ex's line comes through the bus before a's, so
			// once a's arrived ex's had its turn.
			if err := g.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
				t.Fatal(err)
			}
			mustCall(t, rt, "ex__stderr", map[string]any{"text": "hidden-ex-line " + t.Name()})
			waitForStderr(t, rt, "hidden-ex-line "+t.Name())
			g.awaitTool(t, "a__stderr")
			g.call(t, "a__stderr", map[string]any{"text": "shown-a-line " + t.Name()})
			testutil.Eventually(t, 10*time.Second, "a's log line", func() bool {
				g.mu.Lock()
				defer g.mu.Unlock()
				return slices.ContainsFunc(g.logs, func(l *mcp.LoggingMessageParams) bool {
					s, _ := l.Data.(string)
					return strings.Contains(s, "shown-a-line "+t.Name())
				})
			})
			g.mu.Lock()
			for _, l := range g.logs {
				if strings.HasPrefix(l.Logger, "ex") {
					t.Errorf("a log line of ex reached the client: %+v", l)
				}
			}
			g.mu.Unlock()
		})
	}
}

// firstSession is a session of m's server (the tests' one client).
func firstSession(m *mirror) *mcp.ServerSession {
	for ss := range m.srv.Sessions() {
		return ss
	}
	return nil
}
