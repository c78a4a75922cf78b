package runtime

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/internal/testutil"
)

// parkedGateway is a gateway server of rt (its mirror, for its parked
// calls) with a 2026-07-28 go-sdk client that declared elicitation and
// retries nothing itself (multi round-trip off): the test plays the
// client's rounds.
type parkedGateway struct {
	m      *mirror
	cs     *mcp.ClientSession
	cancel context.CancelFunc // ends the gateway server
}

func dialParked(t *testing.T, rt *testRuntime, opts MCPServerOptions) *parkedGateway {
	t.Helper()
	return dialParkedClient(t, rt, opts, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			t.Error("the client's elicitation handler was called: the gateway sent a request of its own")
			return nil, errors.New("unexpected")
		}})
}

// dialParkedClient is dialParked with a client of copts (its multi
// round-trip middleware disabled): what it declares is what the gateway
// may ask it.
func dialParkedClient(t *testing.T, rt *testRuntime, opts MCPServerOptions, copts *mcp.ClientOptions) *parkedGateway {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	m, err := rt.serveMirror(ctx, opts)
	if err != nil {
		t.Fatalf("serveMirror: %v", err)
	}
	ct, st := mcp.NewInMemoryTransports()
	ss, err := m.srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatalf("server Connect: %v", err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	copts.MultiRoundTrip = &mcp.MultiRoundTripOptions{Disabled: true}
	client := mcp.NewClient(&mcp.Implementation{Name: "parked-client", Version: "1"}, copts)
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatalf("client Connect: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	if p := cs.InitializeResult().ProtocolVersion; p < newProtocol {
		t.Fatalf("the client negotiated %s; these tests want %s", p, newProtocol)
	}
	return &parkedGateway{m: m, cs: cs, cancel: cancel}
}

// startParked starts a runtime with the example server ex asking with
// requests of its own (protocol 2025-11-25), and dials a parked gateway
// of opts.
func startParked(t *testing.T, opts MCPServerOptions) (*testRuntime, *parkedGateway) {
	t.Helper()
	rt := start(t, Options{ServerRequests: unlimitedRate}, exampleServer("ex", askingServer(legacyProtocol)...))
	rt.waitReady(t, "ex")
	return rt, dialParked(t, rt, opts)
}

// park calls ex__elicit and returns its input-required answer and the
// parked call behind it.
func (g *parkedGateway) park(t *testing.T) (*mcp.CallToolResult, *parkedCall) {
	t.Helper()
	res, err := g.cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "ex__elicit", Arguments: map[string]any{"message": "who?"}})
	if err != nil {
		t.Fatalf("calling ex__elicit: %v", err)
	}
	if !res.NeedsInput() || len(res.InputRequests) != 1 || res.RequestState == "" {
		t.Fatalf("ex__elicit answered %+v, want input required: one question and a request state", res)
	}
	pc := g.parked(res.RequestState)
	if pc == nil {
		t.Fatal("no parked call under the request state")
	}
	return res, pc
}

// parked is the call parked under token (nil: none).
func (g *parkedGateway) parked(token string) *parkedCall {
	g.m.parked.mu.Lock()
	defer g.m.parked.mu.Unlock()
	return g.m.parked.byToken[token]
}

func (g *parkedGateway) count() int {
	g.m.parked.mu.Lock()
	defer g.m.parked.mu.Unlock()
	return len(g.m.parked.byToken)
}

// ended waits for pc's upstream call to end and returns why it was
// cancelled.
func ended(t *testing.T, pc *parkedCall) error {
	t.Helper()
	select {
	case <-pc.done:
	case <-time.After(30 * time.Second):
		t.Fatal("the parked call's upstream call never ended")
	}
	return context.Cause(pc.ctx)
}

// retry is the client's next round of a call answered res, with answers.
func retry(ctx context.Context, cs *mcp.ClientSession, name string, res *mcp.CallToolResult, answers mcp.InputResponseMap) (*mcp.CallToolResult, error) {
	return cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{"message": "who?"}, InputResponses: answers, RequestState: res.RequestState})
}

// The rounds played by hand: the question is the server's, the answer to
// it reaches the server, and the request state is good for one retry.
func TestGatewayParkedRounds(t *testing.T) {
	rt, g := startParked(t, MCPServerOptions{})
	res, _ := g.park(t)
	var id string
	for k, q := range res.InputRequests {
		if p, ok := q.(*mcp.ElicitParams); !ok || p.Message != "who?" {
			t.Fatalf("the question is %#v, want the server's elicitation", q)
		}
		id = k
	}
	for _, secret := range []string{marker, rt.dir} {
		if strings.Contains(res.RequestState, secret) {
			t.Errorf("the request state %q holds something of the runtime's", res.RequestState)
		}
	}
	got, err := retry(t.Context(), g.cs, "ex__elicit", res, mcp.InputResponseMap{id: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "me"}}})
	if err != nil {
		t.Fatal(err)
	}
	if text := mcpText(got); got.NeedsInput() || text != `accept {"answer":"me"}` {
		t.Errorf("the retry got %q (needs input %v), want the server's answer to the client's", text, got.NeedsInput())
	}
	if n := g.count(); n != 0 {
		t.Errorf("%d calls still parked after the answer", n)
	}
	if _, err := retry(t.Context(), g.cs, "ex__elicit", res, nil); !isInvalidRequestState(err) {
		t.Errorf("a second retry with the same request state: %v, want an invalid-params error naming requestState", err)
	}
}

// Each round has a fresh request state: a server asking twice in one call
// (consult, on a protocol where it asks with requests of its own) gets
// its second question to the client under a new one, and the client's
// replay of the first round's state in the second round is refused.
func TestGatewayParkedFreshStatePerRound(t *testing.T) {
	rt := start(t, Options{ServerRequests: unlimitedRate}, exampleServer("ex", askingServer(legacyProtocol)...))
	rt.waitReady(t, "ex")
	var seen atomic.Int32
	model := clientModel(&seen)
	g := dialParkedClient(t, rt, MCPServerOptions{}, &mcp.ClientOptions{CreateMessageWithToolsHandler: model})
	call := func(res *mcp.CallToolResult, answers mcp.InputResponseMap) (*mcp.CallToolResult, error) {
		p := &mcp.CallToolParams{Name: "ex__consult", Arguments: map[string]any{"question": "2 + 3?"}}
		if res != nil {
			p.RequestState, p.InputResponses = res.RequestState, answers
		}
		return g.cs.CallTool(t.Context(), p)
	}
	answer := func(res *mcp.CallToolResult) mcp.InputResponseMap {
		t.Helper()
		if !res.NeedsInput() || len(res.InputRequests) != 1 || res.RequestState == "" {
			t.Fatalf("ex__consult answered %+v, want one question and a request state", res)
		}
		answers := mcp.InputResponseMap{}
		for id, q := range res.InputRequests {
			params, ok := q.(*mcp.CreateMessageWithToolsParams)
			if !ok {
				t.Fatalf("the question is %#v, want sampling with tools", q)
			}
			r, err := model(t.Context(), &mcp.CreateMessageWithToolsRequest{Params: params})
			if err != nil {
				t.Fatal(err)
			}
			answers[id] = r
		}
		return answers
	}
	first, err := call(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	firstAnswers := answer(first)
	second, err := call(first, firstAnswers)
	if err != nil {
		t.Fatal(err)
	}
	secondAnswers := answer(second)
	if second.RequestState == first.RequestState {
		t.Errorf("the second round has the first round's request state")
	}
	if _, err := call(first, secondAnswers); !isInvalidRequestState(err) {
		t.Errorf("the first round's request state replayed in the second round: %v, want invalid params naming requestState", err)
	}
	got, err := call(second, secondAnswers)
	if err != nil {
		t.Fatal(err)
	}
	if text := mcpText(got); got.NeedsInput() || !strings.Contains(text, "answer: the client says 5") {
		t.Errorf("the last round got %q (needs input %v), want the server's report of the client's answers", text, got.NeedsInput())
	}
}

// A client's answer is checked as a directly asked client's is; an
// unanswered question fails at the server.
func TestGatewayParkedChecksAnswers(t *testing.T) {
	_, g := startParked(t, MCPServerOptions{})
	for _, c := range []struct {
		answers func(id string) mcp.InputResponseMap
		want    string
	}{
		{func(id string) mcp.InputResponseMap {
			return mcp.InputResponseMap{id: &mcp.ElicitResult{Action: "maybe"}}
		}, `action "maybe"`},
		{func(id string) mcp.InputResponseMap { return mcp.InputResponseMap{id: &mcp.ListRootsResult{}} }, "answering a *mcp.ElicitParams"},
		{func(string) mcp.InputResponseMap { return nil }, "no answer to input request"},
	} {
		res, _ := g.park(t)
		var id string
		for k := range res.InputRequests {
			id = k
		}
		got, err := retry(t.Context(), g.cs, "ex__elicit", res, c.answers(id))
		if err != nil {
			t.Fatal(err)
		}
		if text := mcpText(got); !got.IsError || !strings.Contains(text, c.want) {
			t.Errorf("the server saw %q (isError %v), want a refusal naming %s", text, got.IsError, c.want)
		}
	}
}

// isInvalidRequestState reports whether err is the gateway's refusal of
// a request state.
func isInvalidRequestState(err error) bool {
	var rpc *jsonrpc.Error
	return errors.As(err, &rpc) && rpc.Code == jsonrpc.CodeInvalidParams && strings.Contains(rpc.Message, "requestState")
}

// A request state the gateway did not give this client for this tool is
// refused with an invalid-params error naming it, and leaves the parked
// call alone.
func TestGatewayParkedBadToken(t *testing.T) {
	rt, g := startParked(t, MCPServerOptions{})
	res, pc := g.park(t)
	if _, err := retry(t.Context(), g.cs, "ex__elicit", &mcp.CallToolResult{RequestState: "forged"}, nil); !isInvalidRequestState(err) {
		t.Errorf("a forged request state: %v, want invalid params naming requestState", err)
	}
	if _, err := retry(t.Context(), g.cs, "ex__roots", res, nil); !isInvalidRequestState(err) {
		t.Errorf("the request state on another tool: %v, want invalid params naming requestState", err)
	}
	other := dialParked(t, rt, MCPServerOptions{})
	if _, err := retry(t.Context(), other.cs, "ex__elicit", res, nil); !isInvalidRequestState(err) {
		t.Errorf("the request state from another gateway server and session: %v, want invalid params naming requestState", err)
	}
	if g.parked(res.RequestState) != pc {
		t.Error("a refused retry dropped the parked call")
	}
}

// A client that never retries: its call is cancelled upstream after the
// park timeout, and the request state is refused afterwards.
func TestGatewayParkTimeout(t *testing.T) {
	_, g := startParked(t, MCPServerOptions{ParkTimeout: 50 * time.Millisecond})
	res, pc := g.park(t)
	if err := ended(t, pc); !errors.Is(err, errParkTimeout) {
		t.Errorf("the parked call ended with %v, want the park timeout", err)
	}
	testutil.Eventually(t, 10*time.Second, "the parked call dropped", func() bool { return g.count() == 0 })
	if _, err := retry(t.Context(), g.cs, "ex__elicit", res, nil); !isInvalidRequestState(err) {
		t.Errorf("a retry after the timeout: %v, want invalid params naming requestState", err)
	}
}

// A client that disconnects between rounds leaves nothing behind.
func TestGatewayParkedDisconnect(t *testing.T) {
	_, g := startParked(t, MCPServerOptions{})
	_, pc := g.park(t)
	_ = g.cs.Close()
	if err := ended(t, pc); err == nil || !strings.Contains(err.Error(), "session ended") {
		t.Errorf("the parked call ended with %v, want the session's end", err)
	}
	testutil.Eventually(t, 10*time.Second, "the parked call dropped", func() bool { return g.count() == 0 })
}

// The gateway server's end, and the runtime's shutdown, stop parked
// calls: Shutdown returns once they are over.
func TestGatewayParkedStops(t *testing.T) {
	rt, g := startParked(t, MCPServerOptions{})
	_, pc := g.park(t)
	g.cancel()
	if err := ended(t, pc); err == nil {
		t.Error("the gateway server's end: the parked call ended without a cause")
	}

	g = dialParked(t, rt, MCPServerOptions{})
	_, pc = g.park(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := rt.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	select {
	case <-pc.done:
	default:
		t.Error("Shutdown returned with a parked call's upstream call still running")
	}
}

// One client session parks at most MaxParkedCallsPerSession calls; the
// server's question in the next fails naming the limit. (The server is on
// 2026-07-28, where each question comes with its call: one on an older
// protocol asking during many calls at once has its questions routed to
// the newest call, see forwarder.)
func TestGatewayParkedCap(t *testing.T) {
	rt := start(t, Options{ServerRequests: ServerRequestLimits{MaxConcurrent: -1, PerMinute: -1}}, exampleServer("ex", askingServer("")...))
	rt.waitReady(t, "ex")
	g := dialParked(t, rt, MCPServerOptions{})
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		parked  int
		refused []string
	)
	for range MaxParkedCallsPerSession + 1 {
		wg.Go(func() {
			res, err := g.cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "ex__elicit", Arguments: map[string]any{}})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				t.Errorf("a call failed: %v", err)
			case res.NeedsInput():
				parked++
			default:
				refused = append(refused, mcpText(res))
			}
		})
	}
	wg.Wait()
	if parked != MaxParkedCallsPerSession || len(refused) != 1 || !strings.Contains(refused[0], "MaxParkedCallsPerSession") {
		t.Errorf("%d calls parked and %d answered %q; want %d parked and one naming the limit", parked, len(refused), refused, MaxParkedCallsPerSession)
	}
	if n := g.count(); n != MaxParkedCallsPerSession {
		t.Errorf("%d calls parked, want %d", n, MaxParkedCallsPerSession)
	}
}

// A parked-call client's cancellation of the round in flight cancels the
// upstream call (the server sees it), and progress reaches it under its
// own token meanwhile.
func TestGatewayParkedCancelAndProgress(t *testing.T) {
	rt := start(t, Options{}, exampleServer("ex", "-progress-tools"))
	rt.waitReady(t, "ex")
	reports := make(chan *mcp.ProgressNotificationParams, 64)
	_, cs := dialAsking(t, rt, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			select {
			case reports <- req.Params:
			default:
			}
		}}, "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	params := &mcp.CallToolParams{Name: "ex__progress", Arguments: map[string]any{"period_ms": 5, "total_ms": 0}}
	params.SetProgressToken("round-token")
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, params)
		errc <- err
	}()
	select {
	case p := <-reports:
		if p.ProgressToken != "round-token" {
			t.Errorf("progress under %v, want the round's token", p.ProgressToken)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no progress report reached the client")
	}
	cancel()
	if err := <-errc; err == nil {
		t.Error("a cancelled call succeeded")
	}
	// The cancel reaches the upstream server: its sleep says so.
	sleepCtx, cancelSleep := context.WithCancel(context.Background())
	defer cancelSleep()
	go func() {
		_, err := cs.CallTool(sleepCtx, &mcp.CallToolParams{Name: "ex__sleep", Arguments: map[string]any{"ms": 600001}})
		errc <- err
	}()
	waitForStderr(t, rt, "sleeping 600001ms")
	cancelSleep()
	if err := <-errc; err == nil {
		t.Error("a cancelled sleep succeeded")
	}
	waitForStderr(t, rt, "sleep of 600001ms cancelled")
}

// Roots and several questions at once reach a 2026-07-28 client through
// its go-sdk client's multi round-trip middleware.
func TestGatewayParkedRootsAndBatches(t *testing.T) {
	rt := start(t, Options{Roots: []Root{{URI: "file:///local"}}, ServerRequests: ServerRequestLimits{MaxConcurrent: -1, PerMinute: -1}},
		exampleServer("ex", askingServer(legacyProtocol)...))
	rt.waitReady(t, "ex")
	var asked sync.Map
	_, cs := dialAsking(t, rt, &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked.Store(req, true)
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "yes"}}, nil
	}}, "", &mcp.Root{URI: "file:///client"})
	if got := callText(t, cs, "ex__roots", nil); got != "roots: file:///client" {
		t.Errorf("the server saw %q, want the client's roots", got)
	}
	if got := callText(t, cs, "ex__ask", map[string]any{"kind": "elicitation", "count": 5}); got != "ok: 5" {
		t.Errorf("five questions at once: the server saw %q, want all five answered", got)
	}
	n := 0
	asked.Range(func(any, any) bool { n++; return true })
	if n != 5 {
		t.Errorf("the client was asked %d times, want 5", n)
	}
}
