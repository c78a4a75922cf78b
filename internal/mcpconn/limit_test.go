package mcpconn

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/tools"
)

// busyServer is an in-memory MCP server whose tools let a test see and
// steer the calls in flight:
//   - "gate" reports its id on entered, then returns when the test sends
//     on release, or reports its id on cancelled when its context ends
//     (the SDK cancels it on notifications/cancelled);
//   - "barrier" returns once barrier calls are in it at the same time.
//
// Every call that reaches a tool is counted: peak is the most calls ever
// in the tools at once, seen the ids in arrival order.
type busyServer struct {
	transport mcp.Transport  // the client's end
	server    *recordingConn // the server's end
	stop      chan struct{}  // closed at cleanup: ends every tool call

	entered   chan string
	cancelled chan string
	release   chan struct{}

	mu       sync.Mutex
	inFlight int
	peak     int
	seen     []string
	arrived  int
	barrier  int
	met      chan struct{}
}

type idArgs struct {
	ID string `json:"id"`
}

func newBusyServer(t *testing.T, barrier int) *busyServer {
	t.Helper()
	b := &busyServer{
		entered:   make(chan string, 64),
		cancelled: make(chan string, 64),
		release:   make(chan struct{}),
		barrier:   barrier,
		met:       make(chan struct{}),
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "busy", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "gate"}, b.gate)
	mcp.AddTool(srv, &mcp.Tool{Name: "barrier"}, b.meet)
	ct, st := mcp.NewInMemoryTransports()
	b.server = &recordingConn{Transport: st}
	ss, err := srv.Connect(context.Background(), b.server, nil)
	if err != nil {
		t.Fatalf("server connect: %v", err)
	}
	b.transport, b.stop = ct, make(chan struct{})
	// Cleanups run last first: the tools end before the session closes,
	// which waits for them.
	t.Cleanup(func() { _ = ss.Close() })
	t.Cleanup(func() { close(b.stop) })
	return b
}

// recordingConn is a server transport that keeps its connection, so that
// a test can cut it as a crashing server would.
type recordingConn struct {
	mcp.Transport
	conn mcp.Connection
}

func (r *recordingConn) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := r.Transport.Connect(ctx)
	r.conn = c
	return c, err
}

func (b *busyServer) enter(id string) (arrived int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.inFlight++
	b.peak = max(b.peak, b.inFlight)
	b.seen = append(b.seen, id)
	b.arrived++
	return b.arrived
}

func (b *busyServer) leave() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.inFlight--
}

func (b *busyServer) stats() (peak int, seen []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.peak, slices.Clone(b.seen)
}

func (b *busyServer) gate(ctx context.Context, _ *mcp.CallToolRequest, in idArgs) (*mcp.CallToolResult, any, error) {
	b.enter(in.ID)
	defer b.leave()
	b.entered <- in.ID
	select {
	case <-b.release:
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.ID}}}, nil, nil
	case <-ctx.Done():
		b.cancelled <- in.ID
		return nil, nil, ctx.Err()
	case <-b.stop:
		return nil, nil, errors.New("test over")
	}
}

func (b *busyServer) meet(ctx context.Context, _ *mcp.CallToolRequest, in idArgs) (*mcp.CallToolResult, any, error) {
	if b.enter(in.ID) == b.barrier {
		close(b.met)
	}
	defer b.leave()
	select {
	case <-b.met:
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.ID}}}, nil, nil
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	case <-b.stop:
		return nil, nil, errors.New("test over")
	}
}

// dialBusy connects to b with max_concurrent_calls limit.
func dialBusy(t *testing.T, b *busyServer, limit, timeoutSeconds int) *Conn {
	t.Helper()
	srv := config.Server{Name: "t", Type: config.TypeLocal, Command: []string{"in-memory"}, Enabled: true,
		MaxConcurrentCalls: limit, TimeoutSeconds: timeoutSeconds}
	c, err := testDial(context.Background(), Options{Server: srv, Transport: b.transport, Grace: 100 * time.Millisecond})
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

// wait is the bound of every wait in these tests: generous, since it only
// turns a hang into a failure and never measures speed.
const wait = 10 * time.Second

func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(wait):
		t.Fatalf("no %s within %s", what, wait)
		var zero T
		return zero
	}
}

func send(t *testing.T, ch chan<- struct{}, what string) {
	t.Helper()
	select {
	case ch <- struct{}{}:
	case <-time.After(wait):
		t.Fatalf("nobody took %s within %s", what, wait)
	}
}

// waitTracked waits until n calls are registered on c: a call is
// registered before it queues for a slot, so with every slot taken the
// extra ones are known to be waiting.
func waitTracked(t *testing.T, c *Conn, n int) {
	t.Helper()
	testutil.Eventually(t, wait, fmt.Sprintf("%d calls registered", n), func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return len(c.inflight) == n
	})
}

// call runs CallTool of tool with id in the background.
func call(ctx context.Context, c *Conn, tool, id string) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := c.CallTool(ctx, tool, map[string]any{"id": id})
		done <- err
	}()
	return done
}

// Calls on one server run concurrently through its one session: 8 calls
// that each return only once all 8 are in the tool all succeed.
func TestCallsRunConcurrently(t *testing.T) {
	for _, limit := range []int{0, 8} {
		t.Run(fmt.Sprintf("max_concurrent_calls=%d", limit), func(t *testing.T) {
			b := newBusyServer(t, 8)
			c := dialBusy(t, b, limit, 0)
			ctx, cancel := context.WithTimeout(context.Background(), wait)
			defer cancel()
			var results []<-chan error
			for i := range 8 {
				results = append(results, call(ctx, c, "barrier", fmt.Sprint(i)))
			}
			for i, r := range results {
				if err := receive(t, r, "result"); err != nil {
					t.Errorf("call %d: %v", i, err)
				}
			}
			if peak, _ := b.stats(); peak != 8 {
				t.Errorf("peak in flight = %d, want 8", peak)
			}
		})
	}
}

// With a limit, the server never has more calls than the limit, and it
// does get that many: the calls are let out one at a time and each
// release lets exactly one waiting call in.
func TestLimitBoundsCallsInFlight(t *testing.T) {
	const calls = 6
	for _, limit := range []int{1, 2} {
		t.Run(fmt.Sprintf("max_concurrent_calls=%d", limit), func(t *testing.T) {
			b := newBusyServer(t, 0)
			c := dialBusy(t, b, limit, 0)
			var results []<-chan error
			for i := range calls {
				results = append(results, call(context.Background(), c, "gate", fmt.Sprint(i)))
			}
			for range limit {
				receive(t, b.entered, "call reaching the server")
			}
			waitTracked(t, c, calls) // the others are queued
			for range calls - limit {
				send(t, b.release, "a release")
				receive(t, b.entered, "queued call reaching the server")
			}
			for range limit {
				send(t, b.release, "a release")
			}
			for i, r := range results {
				if err := receive(t, r, "result"); err != nil {
					t.Errorf("call %d: %v", i, err)
				}
			}
			if peak, seen := b.stats(); peak != limit || len(seen) != calls {
				t.Errorf("peak in flight = %d, want %d; %d calls seen, want %d", peak, limit, len(seen), calls)
			}
		})
	}
}

// A queued call whose context ends returns the context's error and never
// reaches the server; it gives its place back.
func TestQueuedCallerGivesUp(t *testing.T) {
	for _, tc := range []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
		want error
	}{
		{"cancel", func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) }, context.Canceled},
		{"deadline", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 50*time.Millisecond)
		}, context.DeadlineExceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newBusyServer(t, 0)
			c := dialBusy(t, b, 1, 0)
			first := call(context.Background(), c, "gate", "first")
			receive(t, b.entered, "first call reaching the server")

			ctx, cancel := tc.ctx()
			defer cancel()
			queued := call(ctx, c, "gate", "queued")
			if tc.want == context.Canceled {
				waitTracked(t, c, 2) // cancel it while it waits
				cancel()
			}
			err := receive(t, queued, "queued call's result")
			if !errors.Is(err, tc.want) || errors.Is(err, tools.ErrTimeout) || !strings.Contains(err.Error(), `calling "gate" on "t"`) {
				t.Fatalf("queued call: %v, want %v with the call's context", err, tc.want)
			}

			send(t, b.release, "the first call's release")
			if err := receive(t, first, "first call's result"); err != nil {
				t.Fatalf("first call: %v", err)
			}
			third := call(context.Background(), c, "gate", "third") // the slot was not leaked
			receive(t, b.entered, "third call reaching the server")
			send(t, b.release, "the third call's release")
			if err := receive(t, third, "third call's result"); err != nil {
				t.Fatalf("third call: %v", err)
			}
			if _, seen := b.stats(); !slices.Equal(seen, []string{"first", "third"}) {
				t.Errorf("server saw %q, want only first and third", seen)
			}
		})
	}
}

// timeout_seconds bounds the whole call, the wait for a slot included, and
// the error says the time ran out in the queue.
func TestQueueWaitCountsTowardsTimeout(t *testing.T) {
	b := newBusyServer(t, 0)
	c := dialBusy(t, b, 1, 1)
	c.limit.slots <- struct{}{} // a call holds the only slot
	_, err := c.CallTool(context.Background(), "gate", map[string]any{"id": "late"})
	<-c.limit.slots
	if !errors.Is(err, tools.ErrTimeout) || !strings.Contains(err.Error(), "max_concurrent_calls=1") || !strings.Contains(err.Error(), "timeout_seconds") {
		t.Fatalf("err = %v, want ErrTimeout naming timeout_seconds and max_concurrent_calls=1", err)
	}
	if _, seen := b.stats(); len(seen) != 0 {
		t.Errorf("server saw %q, want nothing", seen)
	}
}

// Close releases queued calls with ErrSessionClosed, and so does the end
// of the transport; neither reaches the server.
func TestEndOfSessionReleasesQueuedCalls(t *testing.T) {
	for _, how := range []string{"close", "server gone"} {
		t.Run(how, func(t *testing.T) {
			b := newBusyServer(t, 0)
			c := dialBusy(t, b, 1, 0)
			results := []<-chan error{call(context.Background(), c, "gate", "first")}
			receive(t, b.entered, "first call reaching the server")
			results = append(results, call(context.Background(), c, "gate", "q1"), call(context.Background(), c, "gate", "q2"))
			waitTracked(t, c, 3)
			closed := make(chan struct{})
			if how == "close" {
				go func() { c.Close(); close(closed) }()
			} else {
				_ = b.server.conn.Close()
				close(closed)
			}
			for i, r := range results {
				err := receive(t, r, "result")
				switch {
				case i == 0 && how == "server gone": // in flight: whatever the SDK saw
					if err == nil {
						t.Errorf("call in flight on a dead server succeeded")
					}
				case !errors.Is(err, tools.ErrSessionClosed):
					t.Errorf("call %d: %v, want ErrSessionClosed", i, err)
				}
			}
			receive(t, closed, "end of Close")
			if _, seen := b.stats(); !slices.Equal(seen, []string{"first"}) {
				t.Errorf("server saw %q, want only the first call", seen)
			}
		})
	}
}

// Cancelling a call's context returns at once and sends
// notifications/cancelled: the server's handler sees its context end.
func TestCancelSendsNotification(t *testing.T) {
	for _, limit := range []int{0, 1} {
		t.Run(fmt.Sprintf("max_concurrent_calls=%d", limit), func(t *testing.T) {
			b := newBusyServer(t, 0)
			c := dialBusy(t, b, limit, 0)
			ctx, cancel := context.WithCancel(context.Background())
			res := call(ctx, c, "gate", "slow")
			receive(t, b.entered, "call reaching the server")
			cancel()
			if err := receive(t, res, "return after cancel"); !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
			if id := receive(t, b.cancelled, "cancellation seen by the server"); id != "slow" {
				t.Fatalf("server cancelled %q", id)
			}
			next := call(context.Background(), c, "gate", "next") // the session and its slot are fine
			receive(t, b.entered, "next call reaching the server")
			send(t, b.release, "the next call's release")
			if err := receive(t, next, "next call's result"); err != nil {
				t.Fatalf("next call: %v", err)
			}
		})
	}
}

// An unlimited Conn has no limiter and a limited one allocates nothing
// per call for it.
func TestLimiterAllocatesNothing(t *testing.T) {
	if newLimiter(0) != nil {
		t.Fatal("max_concurrent_calls 0 built a limiter")
	}
	ctx := context.Background()
	for _, l := range []*limiter{nil, newLimiter(1), newLimiter(4)} {
		allocs := testing.AllocsPerRun(100, func() {
			if err := l.acquire(ctx, nil); err != nil {
				t.Fatal(err)
			}
			l.release()
		})
		if allocs != 0 {
			t.Errorf("limit %d: %.1f allocations per call, want 0", l.limit(), allocs)
		}
	}
}
