package runtime

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/config"
)

// slowServer is the example server answering initialize after delay.
func slowServer(name, delay string) config.Server {
	return exampleServer(name, "-initialize-delay", delay)
}

// hangingServer never answers initialize (for 120 s, its timeout).
func hangingServer(name string) config.Server {
	s := exampleServer(name, "-hang-initialize")
	s.TimeoutSeconds = 120
	return s
}

// A client that connects to a fresh gateway and lists once, at once, sees
// the tools and resources of a server that is still connecting when it
// asks (initialize takes 1.5 s): the lists wait for startup to settle.
// (Prompts are listed by the server's actor after it is ready, with no
// word when the list is empty: they are not waited for.) Initialize and
// ping do not wait.
func TestGatewayStartupWaitListsSlowServer(t *testing.T) {
	rt := start(t, Options{StartupConcurrency: 2}, slowServer("slow", "1500ms"), exampleServer("fast"))
	g := connectGateway(t, rt, MCPServerOptions{StartupWait: time.Minute})
	if err := g.Ping(t.Context(), nil); err != nil {
		t.Fatalf("ping during startup: %v", err)
	}
	if st := mustStatus(t, rt, "slow"); st.Ready {
		t.Fatalf("slow is ready before the first list: the test shows nothing")
	}
	if names := g.toolNames(t); !slices.Contains(names, "slow__echo") || !slices.Contains(names, "fast__echo") {
		t.Errorf("the first tools/list = %v, want slow__echo and fast__echo", names)
	}
	res, err := g.ListResources(t.Context(), nil)
	if err != nil || len(res.Resources) != 2 {
		t.Errorf("the first resources/list = %+v, %v; want both servers' readme", res, err)
	}
}

// A tools/call of a tool whose server is still connecting waits for it
// instead of failing as unknown.
func TestGatewayStartupWaitCall(t *testing.T) {
	rt := start(t, Options{}, slowServer("slow", "1500ms"))
	g := connectGateway(t, rt, MCPServerOptions{StartupWait: time.Minute})
	if st := mustStatus(t, rt, "slow"); st.Ready {
		t.Fatalf("slow is ready before the call: the test shows nothing")
	}
	if res := g.call(t, "slow__echo", map[string]any{"text": "waited"}); mcpText(res) != "waited" {
		t.Errorf("slow__echo during startup = %+v", res)
	}
}

// With the wait run out, the lists answer what is there (the tools of the
// ready server, none of the hanging one) long before the hanging server's
// 120 s timeout, and later requests do not wait again.
func TestGatewayStartupWaitBounded(t *testing.T) {
	rt := start(t, Options{}, exampleServer("ex"), hangingServer("hang"))
	rt.waitReady(t, "ex")
	g := connectGateway(t, rt, MCPServerOptions{StartupWait: 300 * time.Millisecond})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for range 2 {
		res, err := g.ListTools(ctx, nil)
		if err != nil {
			t.Fatalf("tools/list with the wait run out: %v", err)
		}
		if !slices.ContainsFunc(res.Tools, func(tool *mcp.Tool) bool { return tool.Name == "ex__echo" }) {
			t.Errorf("tools/list = %+v, want ex__echo", res.Tools)
		}
	}
	if st := mustStatus(t, rt, "hang"); st.Ready {
		t.Fatalf("hang is ready: the test shows nothing")
	}
	res, err := g.CallTool(ctx, &mcp.CallToolParams{Name: "hang__echo"})
	if err == nil {
		t.Errorf("a call of a tool no server serves = %+v, want an unknown-tool error", res)
	}
}

// A negative StartupWait does not wait: the first list answers at once,
// without the hanging server's tools.
func TestGatewayStartupWaitOff(t *testing.T) {
	rt := start(t, Options{}, hangingServer("hang"))
	g := connectGateway(t, rt, MCPServerOptions{StartupWait: -1})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if res, err := g.ListTools(ctx, nil); err != nil || len(res.Tools) != 0 {
		t.Errorf("tools/list without a wait = %+v, %v; want no tools at once", res, err)
	}
}

// A request's cancellation ends its wait: the middleware returns the
// context's error without calling on, the gate stays shut, and a client's
// cancelled list fails while ping still answers.
func TestGatewayStartupWaitCancelled(t *testing.T) {
	rt := start(t, Options{}, hangingServer("hang"))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	m, err := rt.serveMirror(ctx, MCPServerOptions{StartupWait: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	var called atomic.Bool
	next := func(context.Context, string, mcp.Request) (mcp.Result, error) { called.Store(true); return nil, nil }
	reqCtx, reqCancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := m.awaitStartup(next)(reqCtx, "tools/list", &mcp.ListToolsRequest{})
		done <- err
	}()
	if _, err := m.awaitStartup(next)(t.Context(), "ping", &mcp.ServerRequest[*mcp.PingParams]{}); err != nil || !called.Load() {
		t.Fatalf("ping during the wait: called %v, %v; want it passed on at once", called.Load(), err)
	}
	called.Store(false)
	reqCancel()
	if err := <-done; !errors.Is(err, context.Canceled) || called.Load() {
		t.Fatalf("a cancelled list: called %v, %v; want context.Canceled and nothing called", called.Load(), err)
	}
	select {
	case <-m.startup.settled:
		t.Fatal("the gate opened with hang still connecting")
	default:
	}

	ct, st := mcp.NewInMemoryTransports()
	ss, err := m.srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	g := dialGateway(t, ct)
	lctx, lcancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer lcancel()
	if res, err := g.ListTools(lctx, nil); err == nil {
		t.Errorf("a list whose context ended during the wait = %+v, want an error", res)
	}
	if err := g.Ping(t.Context(), nil); err != nil {
		t.Errorf("ping after a cancelled list: %v", err)
	}
}

// The lists do not wait for a server the filter hides with all its tools
// (here a hanging one): they answer at once what the others serve.
func TestGatewayStartupSkipsHiddenServer(t *testing.T) {
	rt := start(t, Options{}, exampleServer("ex"), hangingServer("hang"))
	rt.waitReady(t, "ex")
	g := connectGateway(t, rt, MCPServerOptions{StartupWait: 10 * time.Minute, Tools: GatewayFilter{Deny: []string{"hang__*"}}})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	res, err := g.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list with only a hidden server starting: %v", err)
	}
	if !slices.ContainsFunc(res.Tools, func(tool *mcp.Tool) bool { return tool.Name == "ex__echo" }) {
		t.Errorf("tools/list = %+v, want ex__echo", res.Tools)
	}
}

// hidesAll is sure only when no tool of the server can pass.
func TestGatewayFilterHidesAll(t *testing.T) {
	for _, c := range []struct {
		f    GatewayFilter
		want bool
	}{
		{GatewayFilter{}, false},
		{GatewayFilter{Deny: []string{"ex__*"}}, true},
		{GatewayFilter{Deny: []string{"e*"}}, true},
		{GatewayFilter{Deny: []string{"ex__echo"}}, false},
		{GatewayFilter{Deny: []string{"ex_?*"}}, false}, // unsure: false
		{GatewayFilter{Allow: []string{"other__*"}}, true},
		{GatewayFilter{Allow: []string{"ex__echo"}}, false},
		{GatewayFilter{Allow: []string{"*echo"}}, false},
		{GatewayFilter{Allow: []string{"exa*"}}, true},
		{GatewayFilter{Allow: []string{"e*"}}, false},
	} {
		if got := c.f.hidesAll("ex"); got != c.want {
			t.Errorf("%+v hides all of ex: %v, want %v", c.f, got, c.want)
		}
	}
}
