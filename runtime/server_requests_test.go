package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/loggate"
	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/status"
)

// legacyAsker is the example server with its fault tools, speaking
// protocol 2025-11-25: it sends sampling and elicitation as requests of its
// own (as most servers in use do), which is where a flood comes from.
func legacyAsker() config.Server {
	return exampleServer("ex", "-fault-tools", "-protocol", "2025-11-25")
}

// askFlood calls the example server's ask tool (count requests of kind to
// the client at once, bytes of text each) and returns its report: one line
// "ok: N" or "error: <what the server got>: N" per outcome.
func askFlood(t *testing.T, rt *testRuntime, kind string, count, bytes int) string {
	t.Helper()
	res, err := rt.CallTool(t.Context(), "ex__ask", map[string]any{"kind": kind, "count": count, "bytes": bytes})
	if err != nil || len(res.Content) != 1 {
		t.Fatalf("ask %s x%d: %+v, %v", kind, count, res, err)
	}
	return res.Content[0].Text
}

// TestSamplingFloodConcurrency: a server flooding sampling requests gets at
// most MaxConcurrent of them to the host's Sample at once; the others are
// refused at once with a JSON-RPC error naming the limit, each logged once
// (without its content) and counted in the server's status.
func TestSamplingFloodConcurrency(t *testing.T) {
	var (
		mu            sync.Mutex
		active, most  int
		calls         int
		release       = make(chan struct{})
		releaseOnce   sync.Once
		releaseBlocks = func() { releaseOnce.Do(func() { close(release) }) }
	)
	t.Cleanup(releaseBlocks)
	sample := func(ctx context.Context, req SamplingRequest) (SamplingResult, error) {
		mu.Lock()
		active++
		calls++
		most = max(most, active)
		mu.Unlock()
		defer func() { mu.Lock(); active--; mu.Unlock() }()
		select {
		case <-release:
			return SamplingResult{Text: "fine", Model: "test"}, nil
		case <-ctx.Done():
			return SamplingResult{}, ctx.Err()
		}
	}
	rt := start(t, Options{Sample: sample, ServerRequests: ServerRequestLimits{MaxConcurrent: 2, PerMinute: -1}},
		legacyAsker())
	rt.waitReady(t, "ex")

	sub := rt.subscribe(t, "ex")
	report := make(chan string, 1)
	go func() { report <- askFlood(t, rt, "sampling", 10, 50) }()
	// The eight over the limit are refused while two wait in Sample.
	for i := range 8 {
		testutil.Await[events.RequestRefused](t, sub, 10*time.Second, fmt.Sprintf("refusal %d of 8", i+1), nil)
	}
	if n := mustStatus(t, rt, "ex").RequestsRefused; n != 8 {
		t.Errorf("status counts %d refusals, want 8", n)
	}
	mu.Lock()
	if calls != 2 || active != 2 {
		t.Errorf("Sample: %d calls, %d running; want 2 and 2", calls, active)
	}
	mu.Unlock()
	releaseBlocks()
	got := <-report
	lines := strings.Split(got, "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "error: ") || !strings.HasSuffix(lines[0], ": 8") ||
		!strings.Contains(lines[0], "limit max_concurrent") || !strings.Contains(lines[0], "more than 2 at once") || lines[1] != "ok: 2" {
		t.Errorf("the server saw:\n%s\nwant 8 refused naming max_concurrent and 2 answered", got)
	}
	if most != 2 {
		t.Errorf("at most %d ran at once in Sample, want 2", most)
	}
	logs := rt.logs.String()
	if n := strings.Count(logs, "refused a request from a server"); n != 8 {
		t.Errorf("%d refusal log lines, want 8", n)
	}
	if !strings.Contains(logs, "server=ex") || !strings.Contains(logs, "limit=max_concurrent") || strings.Contains(logs, strings.Repeat("q", 50)) {
		t.Errorf("refusal log lines must name server and limit, and hold no request content:\n%s", logs)
	}
	var d ServerDetail
	newAPI(t, rt).do("GET", "/api/mcp/servers/ex", "").want(t, http.StatusOK).decode(t, &d)
	if d.RequestsRefused != 8 {
		t.Errorf("requests_refused = %d in the API, want 8", d.RequestsRefused)
	}
}

// TestServerRequestTooLarge: a sampling or elicitation request whose params
// are over MaxBytes is refused without calling the host; one under it goes
// through.
func TestServerRequestTooLarge(t *testing.T) {
	var mu sync.Mutex
	var seen []int // text bytes of each request that reached the host
	note := func(n int) { mu.Lock(); seen = append(seen, n); mu.Unlock() }
	rt := start(t, Options{
		Sample: func(_ context.Context, req SamplingRequest) (SamplingResult, error) {
			note(len(req.Messages[0].Content.Text))
			return SamplingResult{Text: "ok"}, nil
		},
		Elicit: func(_ context.Context, req ElicitationRequest) (ElicitationResult, error) {
			note(len(req.Message))
			return ElicitationResult{Action: "decline"}, nil
		},
		ServerRequests: ServerRequestLimits{MaxBytes: 4096, PerMinute: -1},
	}, legacyAsker())
	rt.waitReady(t, "ex")
	for _, kind := range []string{"sampling", "elicitation"} {
		if got := askFlood(t, rt, kind, 1, 5000); !strings.Contains(got, "limit max_bytes") || !strings.Contains(got, "over the limit of 4096") {
			t.Errorf("%s of 5000 bytes: the server saw %q, want a max_bytes refusal", kind, got)
		}
		if got := askFlood(t, rt, kind, 1, 1000); got != "ok: 1" {
			t.Errorf("%s of 1000 bytes: the server saw %q, want it answered", kind, got)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 || seen[0] != 1000 || seen[1] != 1000 {
		t.Errorf("the host saw requests of %v bytes, want only the two of 1000", seen)
	}
	if n := mustStatus(t, rt, "ex").RequestsRefused; n != 2 {
		t.Errorf("requests_refused = %d, want 2", n)
	}
}

// TestServerRequestRate: with the clock standing still, a server gets
// Burst requests through and the rest are refused naming the rate limit.
func TestServerRequestRate(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	calls := 0
	var mu sync.Mutex
	rt := start(t, Options{
		Sample: func(context.Context, SamplingRequest) (SamplingResult, error) {
			mu.Lock()
			calls++
			mu.Unlock()
			return SamplingResult{Text: "ok"}, nil
		},
		ServerRequests: ServerRequestLimits{MaxConcurrent: -1, now: func() time.Time { return now }},
	}, legacyAsker())
	rt.waitReady(t, "ex")
	got := askFlood(t, rt, "sampling", 5, 10)
	if !strings.Contains(got, "ok: 3") || !strings.Contains(got, "limit rate") || !strings.Contains(got, "10 per minute (burst 3)") {
		t.Errorf("the server saw:\n%s\nwant the default burst of 3 answered and 2 refused naming the rate", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if calls != 3 {
		t.Errorf("Sample called %d times, want 3", calls)
	}
}

// TestRequestGateRefill: the rate bucket refills at PerMinute on the
// injected clock, separately per server and per kind; a refusal is the
// JSON-RPC error the server gets.
func TestRequestGateRefill(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	logs := &testutil.Buffer{}
	board, bus := gateBus(func() time.Time { return now }, slog.New(slog.NewTextHandler(logs, nil)))
	g := newRequestGate(ServerRequestLimits{PerMinute: 6, Burst: 2, now: func() time.Time { return now }}, bus, clockwork.NewFakeClock())
	admit := func(server, method string) error {
		release, err := g.admit(server, method, map[string]string{"x": "y"})
		if err == nil {
			release()
		}
		return err
	}
	for i := range 2 {
		if err := admit("a", "sampling/createMessage"); err != nil {
			t.Fatalf("request %d of the burst: %v", i, err)
		}
	}
	err := admit("a", "sampling/createMessage")
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || rpc.Code != codeRequestRefused || !strings.Contains(rpc.Message, "limit rate") {
		t.Fatalf("third request: %v, want a JSON-RPC refusal naming the rate", err)
	}
	if err := admit("a", "elicitation/create"); err != nil {
		t.Errorf("another kind is limited separately: %v", err)
	}
	if err := admit("b", "sampling/createMessage"); err != nil {
		t.Errorf("another server is limited separately: %v", err)
	}
	now = now.Add(9 * time.Second) // 6 a minute: one every 10 s
	if err := admit("a", "sampling/createMessage"); err == nil {
		t.Error("a request 9 s later went through; the bucket refills one every 10 s")
	}
	now = now.Add(time.Second)
	if err := admit("a", "sampling/createMessage"); err != nil {
		t.Errorf("a request 10 s later: %v, want it through", err)
	}
	if st, _ := board.Get("a"); st.RequestsRefused != 2 {
		t.Errorf("requests_refused = %d, want 2", st.RequestsRefused)
	}
	bus.Emit(events.StateChanged{Header: events.Header{Server: "a"}, To: string(status.Ready)})
	if st, _ := board.Get("a"); st.RequestsRefused != 2 {
		t.Errorf("requests_refused = %d after the server's own status update, want it kept at 2", st.RequestsRefused)
	}
}

// TestSamplingFloodInputRequests: from protocol 2026-07-28 a server asks
// through a tool result's InputRequests, which the SDK fulfils all at once:
// the same limit lets at most MaxConcurrent reach Sample, and the call
// fails with an error naming the limit (the SDK fails the whole round when
// one input request fails).
func TestSamplingFloodInputRequests(t *testing.T) {
	var mu sync.Mutex
	active, most := 0, 0
	sample := func(ctx context.Context, req SamplingRequest) (SamplingResult, error) {
		mu.Lock()
		active++
		most = max(most, active)
		mu.Unlock()
		defer func() { mu.Lock(); active--; mu.Unlock() }()
		<-ctx.Done() // the first refusal ends the round
		return SamplingResult{}, ctx.Err()
	}
	rt := start(t, Options{Sample: sample, ServerRequests: ServerRequestLimits{MaxConcurrent: 2, PerMinute: -1}},
		exampleServer("ex", "-fault-tools"))
	rt.waitReady(t, "ex")
	_, err := rt.CallTool(t.Context(), "ex__ask", map[string]any{"kind": "sampling", "count": 10})
	if err == nil || !strings.Contains(err.Error(), "limit max_concurrent") {
		t.Fatalf("CallTool: %v, want an error naming the max_concurrent limit", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if most > 2 {
		t.Errorf("%d ran at once in Sample, want at most 2", most)
	}
	if n := mustStatus(t, rt, "ex").RequestsRefused; n < 1 {
		t.Errorf("requests_refused = %d, want the refusals counted", n)
	}
}

// TestRefusalFloodIsRateLimitedInTheLog: a server refused 10 000 times
// reaches the log as the log gate's burst, then one record a second after
// a count of the suppressed ones, while its status counts every refusal.
// The clock is the test's: nothing sleeps.
func TestRefusalFloodIsRateLimitedInTheLog(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	logs := &testutil.Buffer{}
	board, bus := gateBus(func() time.Time { return now }, slog.New(slog.NewJSONHandler(logs, nil)))
	g := newRequestGate(ServerRequestLimits{MaxBytes: 1, now: func() time.Time { return now }}, bus, clockwork.NewFakeClock())
	refuse := func() {
		if _, err := g.admit("a", "sampling/createMessage", "too large"); err == nil {
			t.Fatal("a request over MaxBytes went through")
		}
	}
	const flood = 10_000
	for range flood {
		refuse()
	}
	records := func() []string { return strings.Split(strings.TrimSpace(logs.String()), "\n") }
	if n := len(records()); n != loggate.Burst {
		t.Fatalf("%d refusals logged %d records, want the burst of %d", flood, n, loggate.Burst)
	}
	now = now.Add(time.Second)
	refuse()
	tail := records()[loggate.Burst:]
	if len(tail) != 2 || !strings.Contains(tail[0], `"msg":"refusal records of a server suppressed"`) ||
		!strings.Contains(tail[0], `"server":"a"`) || !strings.Contains(tail[0], fmt.Sprintf(`"suppressed":%d`, flood-loggate.Burst)) ||
		!strings.Contains(tail[1], "refused a request from a server") {
		t.Fatalf("after a second the log got %q, want the count of %d suppressed records, then the refusal", tail, flood-loggate.Burst)
	}
	refuse() // suppressed: logged as a count when the server goes
	g.forget("a")
	bus.Emit(events.ServerRemoved{Header: events.Header{Server: "a"}})
	if tail := records()[loggate.Burst+2:]; len(tail) != 1 || !strings.Contains(tail[0], `"suppressed":1`) {
		t.Fatalf("when the server went the log got %q, want a count of 1 suppressed record", tail)
	}
	if n := board.refusedBeforeRemoval; n != flood+2 {
		t.Errorf("requests_refused = %d, want every refusal counted: %d", n, flood+2)
	}
}

// TestRequestGateForgetsRemovedServers: the request limits' state is kept
// by server name; after many servers of new names were added, asked the
// host and were removed, it holds only the live server.
func TestRequestGateForgetsRemovedServers(t *testing.T) {
	rt := start(t, Options{Sample: func(context.Context, SamplingRequest) (SamplingResult, error) {
		return SamplingResult{}, nil
	}})
	ask := func(name string) {
		release, err := rt.gate.admit(name, "sampling/createMessage", "hi")
		if err != nil {
			t.Fatalf("a request of %s: %v", name, err)
		}
		release()
	}
	server := func(name string) config.Server {
		s := exampleServer(name)
		s.Enabled = false // no process: the gate's state is what is tested
		return s
	}
	if _, err := rt.AddServer(t.Context(), server("keep")); err != nil {
		t.Fatal(err)
	}
	ask("keep")
	const cycles = 20
	for i := range cycles {
		name := fmt.Sprintf("churn-%d", i)
		if _, err := rt.AddServer(t.Context(), server(name)); err != nil {
			t.Fatal(err)
		}
		ask(name)
		if err := rt.RemoveServer(t.Context(), name); err != nil {
			t.Fatal(err)
		}
	}
	live := func() []string {
		rt.gate.mu.Lock()
		defer rt.gate.mu.Unlock()
		return slices.Sorted(maps.Keys(rt.gate.servers))
	}
	testutil.Eventually(t, 10*time.Second, "the gate to hold only the live server", func() bool { return slices.Equal(live(), []string{"keep"}) })
}

// gateBus is a Bus on clock whose reducer is a status board holding the
// server "a" and, synchronously after it, the runtime's event log on
// logger: a test sees the log of every event as soon as Emit returned.
func gateBus(clock func() time.Time, logger *slog.Logger) (*refusalBoard, *events.Bus) {
	b := &refusalBoard{Board: status.NewBoard(nil)}
	l := &eventLog{logger: logger, refusals: map[string]*loggate.Gate{}}
	bus := events.NewBus(&events.Options{Now: clock, Reducer: func(e events.Event) events.Event {
		if _, ok := e.(events.ServerRemoved); ok {
			st, _ := b.Get("a")
			b.refusedBeforeRemoval = st.RequestsRefused
		}
		e = b.Apply(e)
		if e.Head().Seq != 0 { // tallied events reach no subscriber, so not the log
			l.log(e)
		}
		return e
	}})
	bus.Emit(events.ServerAdded{Header: events.Header{Server: "a"}})
	bus.Emit(events.StateChanged{Header: events.Header{Server: "a"}, To: string(status.Starting)})
	return b, bus
}

// refusalBoard is a board that remembers the count of "a" when it went.
type refusalBoard struct {
	*status.Board
	refusedBeforeRemoval int
}

// TestRefusalFloodKeepsLifecycle: 2000 refused requests from one server
// push no lifecycle event out of the history, flood no subscriber's buffer
// (the source delivers the log gate's burst, then one a second saying how
// many it held back) and are every one counted in the status.
func TestRefusalFloodKeepsLifecycle(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	board, bus := gateBus(func() time.Time { return now }, slog.New(slog.DiscardHandler))
	defer bus.Close()
	live := bus.Subscribe(events.SubscribeOptions{Buffer: loggate.Burst + 10})
	defer live.Close()
	g := newRequestGate(ServerRequestLimits{MaxBytes: 1, now: func() time.Time { return now }}, bus, clockwork.NewFakeClock())
	const flood = 2000
	refuse := func() {
		if _, err := g.admit("a", "sampling/createMessage", "too large"); err == nil {
			t.Fatal("a request over MaxBytes went through")
		}
	}
	for range flood {
		refuse()
	}
	now = now.Add(time.Second)
	refuse()
	bus.Emit(events.StateChanged{Header: events.Header{Server: "a"}, To: string(status.Ready)})

	nextEvent := func(sub *events.Subscription) events.Event {
		return testutil.AwaitEvent(t, sub, 5*time.Second, "the next event", func(events.Event) bool { return true })
	}
	resumed := bus.Subscribe(events.SubscribeOptions{From: 1})
	defer resumed.Close()
	for _, want := range []string{events.TypeServerAdded, events.TypeStateChanged, events.TypeStateChanged} {
		if e := nextEvent(resumed); e.Type() != want {
			t.Fatalf("resumed from 1: got %s, want %s (refusals must not push lifecycle out of the history)", e, want)
		}
	}
	var refusals, held int
	for {
		e := nextEvent(live)
		if r, ok := e.(events.RequestRefused); ok {
			refusals++
			held += r.Suppressed
			continue
		}
		if e.Type() != events.TypeStateChanged {
			t.Fatalf("live: got %s, want the refusals then the state change", e)
		}
		break
	}
	if refusals != loggate.Burst+1 || refusals+held != flood+1 {
		t.Errorf("a subscriber got %d refusals saying %d more held back, want the burst of %d and one, saying %d", refusals, held, loggate.Burst, flood+1-refusals)
	}
	if st, _ := board.Get("a"); st.RequestsRefused != flood+1 {
		t.Errorf("requests_refused = %d, want every refusal: %d", st.RequestsRefused, flood+1)
	}
}
