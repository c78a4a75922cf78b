package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/internal/exampleserver"
	"github.com/openprogram/mcpvisor/internal/testutil"
)

// legacyProtocol is the protocol on which a server asks its client with
// requests of its own, and the newest on which the gateway can ask its
// client so (see forwarder).
const legacyProtocol = "2025-11-25"

// askingServer is the example server with the tools that ask the client
// during a call, on protocol (empty: the newest, where it asks through
// its tool results).
func askingServer(protocol string) []string {
	flags := []string{"-client-tools", "-fault-tools"}
	if protocol != "" {
		flags = append(flags, "-protocol", protocol)
	}
	return flags
}

// dialAsking connects a go-sdk client of opts (roots: its roots) to a new
// gateway server of rt, on protocol.
func dialAsking(t *testing.T, rt *testRuntime, opts *mcp.ClientOptions, protocol string, roots ...*mcp.Root) (*mcp.Client, *mcp.ClientSession) {
	t.Helper()
	ctx, ct := serveInMemory(t, rt, MCPServerOptions{})
	client := mcp.NewClient(&mcp.Implementation{Name: "asking-client", Version: "1"}, opts)
	client.AddRoots(roots...)
	cs, err := client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatalf("client Connect: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return client, cs
}

// callText calls a tool through cs and returns its text, failing on an
// error.
func callText(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("calling %s: %v", name, err)
	}
	if res.IsError {
		t.Fatalf("calling %s: an error result: %s", name, mcpText(res))
	}
	return mcpText(res)
}

// clientModel is a gateway client's model: toolModel's answers, marked
// as its own.
func clientModel(seen *atomic.Int32) func(context.Context, *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
	return func(_ context.Context, req *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
		seen.Add(1)
		last := req.Params.Messages[len(req.Params.Messages)-1]
		for _, c := range last.Content {
			if r, ok := c.(*mcp.ToolResultContent); ok {
				return &mcp.CreateMessageWithToolsResult{Role: "assistant", Model: "client-model", StopReason: "endTurn",
					Content: []mcp.Content{&mcp.TextContent{Text: "the client says " + mcpText(&mcp.CallToolResult{Content: r.Content})}}}, nil
			}
		}
		return &mcp.CreateMessageWithToolsResult{Role: "assistant", Model: "client-model",
			Content: []mcp.Content{&mcp.ToolUseContent{ID: "c-1", Name: "add", Input: map[string]any{"a": 2, "b": 3}}}}, nil
	}
}

// The gateway client's protocols: one it asks with requests of its own,
// and 2026-07-28 (the go-sdk's default), which it asks through
// input-required answers to the call (parked calls; the go-sdk client's
// multi round-trip middleware answers them).
var clientProtocols = []string{legacyProtocol, ""}

// A server's sampling during a gateway call reaches the gateway client
// that declared sampling, whichever way the server asks (requests of its
// own, or its tool result on 2026-07-28, where the call's context routes
// it) and whichever protocol the client is on, and the client's answers
// reach the server; a client without the capability gets
// Options.Sample's.
func TestGatewayForwardsSampling(t *testing.T) {
	for _, upstream := range []string{legacyProtocol, ""} {
		for _, downstream := range clientProtocols {
			t.Run(fmt.Sprintf("upstream %q client %q", upstream, downstream), func(t *testing.T) {
				local := &toolModel{}
				rt := start(t, Options{Sample: local.sample, ServerRequests: unlimitedRate}, exampleServer("ex", askingServer(upstream)...))
				rt.waitReady(t, "ex")

				var seen atomic.Int32
				_, capable := dialAsking(t, rt, &mcp.ClientOptions{CreateMessageWithToolsHandler: clientModel(&seen)}, downstream)
				got := callText(t, capable, "ex__consult", map[string]any{"question": "2 + 3?"})
				if !strings.Contains(got, "tool_use c-1 add") || !strings.Contains(got, "answer: the client says 5") {
					t.Errorf("the server saw\n%s\nwant the client's tool use and answer", got)
				}
				if seen.Load() != 2 || len(local.requests()) != 0 {
					t.Errorf("the client's model was asked %d times and Options.Sample %d, want 2 and 0", seen.Load(), len(local.requests()))
				}

				_, plain := dialAsking(t, rt, &mcp.ClientOptions{}, downstream)
				if got := callText(t, plain, "ex__consult", map[string]any{"question": "2 + 3?"}); !strings.Contains(got, "answer: 2 + 3 = 5") {
					t.Errorf("without the capability the server saw\n%s\nwant Options.Sample's answer", got)
				}
				if n := len(local.requests()); n != 2 {
					t.Errorf("Options.Sample was asked %d times, want 2", n)
				}
			})
		}
	}
}

// Elicitation goes to the client that declared it, else to Options.Elicit.
func TestGatewayForwardsElicitation(t *testing.T) {
	for _, upstream := range []string{legacyProtocol, ""} {
		for _, downstream := range clientProtocols {
			t.Run(fmt.Sprintf("upstream %q client %q", upstream, downstream), func(t *testing.T) {
				local := func(_ context.Context, req ElicitationRequest) (ElicitationResult, error) {
					return ElicitationResult{Action: "accept", Content: map[string]any{"answer": "local to " + req.Server}}, nil
				}
				rt := start(t, Options{Elicit: local, ServerRequests: unlimitedRate}, exampleServer("ex", askingServer(upstream)...))
				rt.waitReady(t, "ex")
				_, capable := dialAsking(t, rt, &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "client saw " + req.Params.Message}}, nil
				}}, downstream)
				if got := callText(t, capable, "ex__elicit", map[string]any{"message": "who?"}); got != `accept {"answer":"client saw who?"}` {
					t.Errorf("the server saw %q, want the client's answer", got)
				}
				_, plain := dialAsking(t, rt, &mcp.ClientOptions{}, downstream)
				if got := callText(t, plain, "ex__elicit", nil); got != `accept {"answer":"local to ex"}` {
					t.Errorf("without the capability the server saw %q, want Options.Elicit's", got)
				}
			})
		}
	}
}

// roots/list goes to the client that declared roots (its roots), else
// Options.Roots answer; a roots-capable client that connects is announced
// to the server (which may have read its roots before), and its roots
// list_changed reaches the server, once per change.
func TestGatewayForwardsRoots(t *testing.T) {
	rt := start(t, Options{Roots: []Root{{URI: "file:///local"}}, ServerRequests: unlimitedRate}, exampleServer("ex", askingServer(legacyProtocol)...))
	rt.waitReady(t, "ex")
	heard := func(n int) {
		t.Helper()
		testutil.Eventually(t, 10*time.Second, fmt.Sprintf("%d roots changes at the server", n), func() bool {
			return strings.Count(rt.logs.String(), exampleserver.RootsChangedLine) >= n
		})
	}
	client, capable := dialAsking(t, rt, nil, legacyProtocol, &mcp.Root{URI: "file:///client"})
	heard(1)
	if got := callText(t, capable, "ex__roots", nil); got != "roots: file:///client" {
		t.Errorf("the server saw %q, want the client's roots", got)
	}
	client.AddRoots(&mcp.Root{URI: "file:///client/more"})
	heard(2)
	if got := callText(t, capable, "ex__roots", nil); got != "roots: file:///client\nfile:///client/more" {
		t.Errorf("after the change the server saw %q", got)
	}
	_, plain := dialAsking(t, rt, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}, legacyProtocol)
	if got := callText(t, plain, "ex__roots", nil); got != "roots: file:///local" {
		t.Errorf("without the capability the server saw %q, want Options.Roots", got)
	}
	// "roots": {} (no listChanged) is the capability all the same.
	_, bare := dialAsking(t, rt, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{RootsV2: &mcp.RootCapabilities{}}},
		legacyProtocol, &mcp.Root{URI: "file:///bare"})
	if got := callText(t, bare, "ex__roots", nil); got != "roots: file:///bare" {
		t.Errorf("a client declaring roots without listChanged: the server saw %q, want its roots", got)
	}
	if n := strings.Count(rt.logs.String(), exampleserver.RootsChangedLine); n != 2 {
		t.Errorf("the server heard of %d roots changes, want 2 (one per change; none for clients whose roots it would not get)", n)
	}
}

// Roots changes gather for rootsDelay and reach each server once; only
// the servers whose roots would come from the announcing session hear of
// them.
func TestGatewayRootsChangedGathered(t *testing.T) {
	rt := start(t, Options{})
	f := rt.fwd
	f.mu.Lock()
	f.rootsDelay = time.Hour // flushed by hand below
	f.mu.Unlock()
	var told sync.Map
	for _, name := range []string{"a", "b"} {
		var n atomic.Int32
		told.Store(name, &n)
		f.watchRoots(name, func() { n.Add(1) })
	}
	count := func(name string) int32 { v, _ := told.Load(name); return v.(*atomic.Int32).Load() }
	pending := func() int {
		f.mu.Lock()
		defer f.mu.Unlock()
		return len(f.rootsPending)
	}
	flush := func() {
		f.mu.Lock()
		if f.rootsTimer != nil {
			f.rootsTimer.Stop()
		}
		f.mu.Unlock()
		f.flushRoots()
	}

	dialAsking(t, rt, nil, legacyProtocol)
	// Its initialized announces it: the only session, roots-capable.
	testutil.Eventually(t, 10*time.Second, "the new session's roots announced", func() bool { return pending() == 2 })
	call := f.route(t.Context(), "a", rootsDeclared)
	if call == nil {
		t.Fatal("the only roots-capable session is not routed to")
	}
	f.rootsChanged(call.session)
	f.rootsChanged(call.session)
	flush()
	if count("a") != 1 || count("b") != 1 {
		t.Errorf("three announcements told the servers %d and %d times, want once each", count("a"), count("b"))
	}

	dialAsking(t, rt, nil, legacyProtocol)
	f.rootsChanged(call.session) // two sessions, no call: roots go to neither
	if n := pending(); n != 0 {
		t.Errorf("%d servers to tell of a change of a session their roots would not come from", n)
	}
	flush()
	if count("a") != 1 || count("b") != 1 {
		t.Errorf("the servers were told %d and %d times, want still once each", count("a"), count("b"))
	}
}

// A forwarded request is refused by the ServerRequests limits as a local
// one is, before the client is asked; the client's answer is bounded by
// the same size.
func TestGatewayForwardLimits(t *testing.T) {
	rt := start(t, Options{ServerRequests: ServerRequestLimits{MaxBytes: 2000, PerMinute: -1}}, exampleServer("ex", askingServer(legacyProtocol)...))
	rt.waitReady(t, "ex")
	var asked atomic.Int32
	_, cs := dialAsking(t, rt, &mcp.ClientOptions{CreateMessageWithToolsHandler: func(context.Context, *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
		asked.Add(1)
		return &mcp.CreateMessageWithToolsResult{Role: "assistant", Model: "m", Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("a", 3000)}}}, nil
	}}, legacyProtocol)
	got := callText(t, cs, "ex__ask", map[string]any{"kind": "sampling", "count": 1, "bytes": 3000})
	if !strings.Contains(got, "limit max_bytes") || asked.Load() != 0 {
		t.Errorf("a request over MaxBytes: the server saw %q, the client was asked %d times; want a refusal, unasked", got, asked.Load())
	}
	got = callText(t, cs, "ex__ask", map[string]any{"kind": "sampling", "count": 1, "bytes": 10})
	if !strings.Contains(got, "over the limit of 2000") || asked.Load() != 1 {
		t.Errorf("an answer over MaxBytes: the server saw %q (client asked %d times), want it refused", got, asked.Load())
	}
}

// A client that never answers holds nothing once its call ends: the
// cancelled gateway call ends the wait (the client's handler sees its
// context end) and the upstream call.
func TestGatewayForwardBounded(t *testing.T) {
	rt := start(t, Options{}, exampleServer("ex", askingServer(legacyProtocol)...))
	rt.waitReady(t, "ex")
	started, ended := make(chan struct{}), make(chan struct{})
	var once sync.Once
	_, cs := dialAsking(t, rt, &mcp.ClientOptions{ElicitationHandler: func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		once.Do(func() { close(started) })
		<-ctx.Done()
		close(ended)
		return nil, ctx.Err()
	}}, legacyProtocol)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ex__elicit", Arguments: map[string]any{}})
		errc <- err
	}()
	<-started
	cancel()
	if err := <-errc; err == nil {
		t.Error("a cancelled call succeeded")
	}
	select {
	case <-ended:
	case <-time.After(30 * time.Second):
		t.Fatal("the client's handler still waits after its call was cancelled")
	}
	// The server is still there for the next call.
	_, plain := dialAsking(t, rt, &mcp.ClientOptions{}, legacyProtocol)
	if got := callText(t, plain, "ex__elicit", nil); got != "decline null" {
		t.Errorf("after the cancelled call the server saw %q, want the default decline", got)
	}
}

// unlimitedRate lets a test's servers ask as often as they like.
var unlimitedRate = ServerRequestLimits{PerMinute: -1}

// With two gateway sessions' calls in flight on one server, a server
// asking through its tool result (2026-07-28) reaches the session whose
// call it is, by the call's context, even when that session cannot answer
// (then Options.Elicit does); a server asking with requests of its own
// reaches no client while calls of several sessions are in flight there
// (the request may be either's: the capable client, asked directly or
// through its parked call, must never get the other's question), so
// Options.Elicit answers it.
func TestGatewayForwardRouting(t *testing.T) {
	for _, tc := range []struct{ upstream, busy string }{
		{legacyProtocol, legacyProtocol},
		{legacyProtocol, ""},
		{"", legacyProtocol},
	} {
		t.Run(fmt.Sprintf("upstream %q busy client %q", tc.upstream, tc.busy), func(t *testing.T) {
			local := func(context.Context, ElicitationRequest) (ElicitationResult, error) {
				return ElicitationResult{Action: "accept", Content: map[string]any{"answer": "local"}}, nil
			}
			rt := start(t, Options{Elicit: local, ServerRequests: unlimitedRate}, exampleServer("ex", askingServer(tc.upstream)...))
			rt.waitReady(t, "ex")
			started, release := make(chan struct{}), make(chan struct{})
			var calls atomic.Int32
			_, busy := dialAsking(t, rt, &mcp.ClientOptions{ElicitationHandler: func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				if calls.Add(1) > 1 {
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "busy client"}}, nil
				}
				close(started)
				select {
				case <-release:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "its own"}}, nil
			}}, tc.busy)
			_, plain := dialAsking(t, rt, &mcp.ClientOptions{}, legacyProtocol)
			busyGot := make(chan string, 1)
			go func() {
				res, err := busy.CallTool(context.Background(), &mcp.CallToolParams{Name: "ex__elicit", Arguments: map[string]any{}})
				if err != nil {
					busyGot <- err.Error()
					return
				}
				busyGot <- mcpText(res)
			}()
			<-started
			got := callText(t, plain, "ex__elicit", nil)
			close(release)
			if want := `accept {"answer":"local"}`; got != want {
				t.Errorf("the plain client's call: the server saw %q, want %q", got, want)
			}
			if got := <-busyGot; got != `accept {"answer":"its own"}` {
				t.Errorf("the busy client's call: the server saw %q, want its own answer", got)
			}
		})
	}
}

// Over Streamable HTTP the question goes on the call's own POST stream:
// a client that opened no standalone stream gets it all the same.
func TestGatewayForwardsOverHTTP(t *testing.T) {
	rt := start(t, Options{ServerRequests: unlimitedRate}, exampleServer("ex", askingServer(legacyProtocol)...))
	rt.waitReady(t, "ex")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := rt.MCPServer(ctx, MCPServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(MCPHandler(srv, MCPHTTPOptions{}))
	defer hs.Close()
	defer hs.CloseClientConnections()
	client := mcp.NewClient(&mcp.Implementation{Name: "http-client", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "over http"}}, nil
		}})
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: hs.URL + "/mcp", DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close() // before the server closes: the DELETE ends the server's session
	if p := cs.InitializeResult().ProtocolVersion; p >= newProtocol {
		t.Fatalf("the HTTP gateway negotiated %s; this test wants an older protocol", p)
	}
	if got := callText(t, cs, "ex__elicit", nil); got != `accept {"answer":"over http"}` {
		t.Errorf("the server saw %q, want the HTTP client's answer", got)
	}
}

// A client's answer is checked as the host's own: a tool use of a tool
// the request did not offer, or an action elicitation has not, never
// reaches the server as an answer.
func TestGatewayForwardChecksAnswers(t *testing.T) {
	rt := start(t, Options{ServerRequests: unlimitedRate}, exampleServer("ex", askingServer(legacyProtocol)...))
	rt.waitReady(t, "ex")
	_, cs := dialAsking(t, rt, &mcp.ClientOptions{
		CreateMessageWithToolsHandler: func(context.Context, *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
			return &mcp.CreateMessageWithToolsResult{Role: "assistant", Model: "m",
				Content: []mcp.Content{&mcp.ToolUseContent{ID: "x", Name: "rm", Input: map[string]any{}}}}, nil
		},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "maybe"}, nil
		}}, legacyProtocol)
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"ex__consult", map[string]any{"question": "?"}, "no tool \"rm\" was offered"},
		{"ex__elicit", map[string]any{}, `action "maybe"`},
	} {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
		if err != nil {
			t.Fatalf("%s: %v", c.tool, err)
		}
		if got := mcpText(res); !res.IsError || !strings.Contains(got, c.want) {
			t.Errorf("%s: the server saw %q (isError %v), want a refusal naming %s", c.tool, got, res.IsError, c.want)
		}
	}
}

// With no gateway call in flight on the server, a request goes to the
// only gateway session connected, if it can answer, and to nobody when
// several are.
func TestGatewayForwardWithoutCall(t *testing.T) {
	rt := start(t, Options{})
	anyone := func(*mcp.ClientCapabilities) bool { return true }
	if call := rt.fwd.route(t.Context(), "ex", anyone); call != nil {
		t.Fatal("a request was routed with no gateway session connected")
	}
	dialAsking(t, rt, nil, legacyProtocol)
	call := rt.fwd.route(t.Context(), "ex", anyone)
	if call == nil || call.session == nil || call.ctx != nil || call.park != nil {
		t.Fatalf("the only session: routed to %+v, want it, with no call", call)
	}
	if got := rt.fwd.route(t.Context(), "ex", func(*mcp.ClientCapabilities) bool { return false }); got != nil {
		t.Error("routed to the only session, which cannot answer")
	}
	dialAsking(t, rt, nil, legacyProtocol)
	if got := rt.fwd.route(t.Context(), "ex", anyone); got != nil {
		t.Error("routed with two sessions connected and no call in flight")
	}
}

// What a server asks passes to the gateway client with its _meta and
// sampling's metadata scrubbed of the server's secrets (a planted
// marker, the server's configured env), whichever way it asks and
// whichever protocol the client is on.
func TestGatewayForwardScrubsMeta(t *testing.T) {
	for _, upstream := range []string{legacyProtocol, ""} {
		for _, downstream := range clientProtocols {
			t.Run(fmt.Sprintf("upstream %q client %q", upstream, downstream), func(t *testing.T) {
				rt := start(t, Options{ServerRequests: unlimitedRate}, exampleServer("ex", askingServer(upstream)...))
				rt.waitReady(t, "ex")
				var mu sync.Mutex
				var seen []string
				record := func(v ...any) {
					raw, _ := json.Marshal(v)
					mu.Lock()
					seen = append(seen, string(raw))
					mu.Unlock()
				}
				var sampled atomic.Int32
				model := clientModel(&sampled)
				_, cs := dialAsking(t, rt, &mcp.ClientOptions{
					CreateMessageWithToolsHandler: func(ctx context.Context, req *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
						record(req.Params.Meta, req.Params.Metadata)
						return model(ctx, req)
					},
					ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
						record(req.Params.Meta)
						return &mcp.ElicitResult{Action: "decline"}, nil
					}}, downstream)
				callText(t, cs, "ex__elicit", map[string]any{"meta_env": testutil.MarkerEnv})
				callText(t, cs, "ex__consult", map[string]any{"question": "2 + 3?", "meta_env": testutil.MarkerEnv})
				mu.Lock()
				defer mu.Unlock()
				if len(seen) < 2 || !strings.Contains(seen[0], `"env"`) || !strings.Contains(seen[1], `"env"`) {
					t.Fatalf("the client saw %d requests, want the elicitation's and the sampling's, each with its _meta", len(seen))
				}
				for i, s := range seen {
					if strings.Contains(s, marker) {
						t.Errorf("request %d reached the client with the server's secret in its _meta or metadata", i)
					}
				}
			})
		}
	}
}

// The only-session rule respects the gateway's filter: a server the
// gateway hides never reaches its client that way, a server it shows
// does.
func TestGatewayForwardWithoutCallHidden(t *testing.T) {
	rt := start(t, Options{})
	ctx, ct := serveInMemory(t, rt, MCPServerOptions{Tools: GatewayFilter{Deny: []string{"ex__*"}}})
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "filtered-client", Version: "1"}, nil).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: legacyProtocol})
	if err != nil {
		t.Fatalf("client Connect: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	anyone := func(*mcp.ClientCapabilities) bool { return true }
	if call := rt.fwd.route(t.Context(), "ex", anyone); call != nil {
		t.Error("a server the gateway hides reached its only client")
	}
	if call := rt.fwd.route(t.Context(), "other", anyone); call == nil || call.session == nil {
		t.Errorf("a server the gateway shows: routed to %+v, want its only client", call)
	}
}
