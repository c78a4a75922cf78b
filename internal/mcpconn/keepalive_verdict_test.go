package mcpconn

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/internal/exampleserver"
	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/tools"
)

// A remote server that went away — its gateway answers only 503 (the
// go-sdk turns that into a *jsonrpc.Error, ErrRejected), or the
// connection is refused — answers no probe: it is declared lost within
// two intervals on both protocol versions, though each probe fails at
// once rather than timing out.
func TestKeepAliveFindsAnUnreachableRemote(t *testing.T) {
	for _, how := range []string{"503", "refused"} {
		for _, p := range pins {
			t.Run(how+"/"+p.want, func(t *testing.T) {
				h := remoteExample(t)
				var down atomic.Bool
				web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if down.Load() {
						http.Error(w, "no healthy upstream", http.StatusServiceUnavailable)
						return
					}
					h.ServeHTTP(w, r)
				}))
				defer web.Close()
				srv := config.Server{Name: "web", Type: config.TypeHTTP, URL: web.URL, Enabled: true, TimeoutSeconds: 5, ProtocolVersion: p.pin}
				c, err := testDial(context.Background(), Options{Server: srv, KeepAlive: testInterval})
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				if how == "503" {
					down.Store(true)
				} else {
					web.CloseClientConnections()
					web.Close()
				}
				awaitLost(t, c, time.Now(), 2*testInterval, "an unreachable remote")
				if err := c.Err(); !errors.Is(err, tools.ErrUnresponsive) {
					t.Errorf("Err = %v, want ErrUnresponsive", err)
				}
			})
		}
	}
}

// remoteExample is a Streamable HTTP handler of one example server,
// whose sessions the test's end closes: a server whose client was cut
// off never sees the DELETE that would end its session.
func remoteExample(t *testing.T) http.Handler {
	s := exampleserver.NewServer(exampleserver.Options{Stderr: discard{}})
	t.Cleanup(func() {
		for ss := range s.Sessions() {
			ss.Close()
		}
	})
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
}

// A single failed probe is forgiven when the next one is answered, and
// the keepalive goes on probing after it: a 503 from a gateway (the SDK's
// ErrRejected), or a 500, an error no rule names. (A 4xx or a body that is
// not JSON-RPC makes the SDK end the session itself: a lost session.)
func TestKeepAliveForgivesOneTransientFailure(t *testing.T) {
	for _, how := range []string{"503", "500"} {
		t.Run(how, func(t *testing.T) {
			h := remoteExample(t)
			var fail, failed, posts atomic.Int32
			web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPost {
					posts.Add(1)
					if fail.CompareAndSwap(1, 0) {
						failed.Add(1)
						code, _ := strconv.Atoi(how)
						http.Error(w, "busy", code)
						return
					}
				}
				h.ServeHTTP(w, r)
			}))
			defer web.Close()
			srv := config.Server{Name: "web", Type: config.TypeHTTP, URL: web.URL, Enabled: true, TimeoutSeconds: 5, ProtocolVersion: "2025-11-25"}
			c, err := testDial(context.Background(), Options{Server: srv, KeepAlive: testInterval})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			fail.Store(1)
			testutil.Eventually(t, 5*time.Second, "the failed probe", func() bool { return failed.Load() == 1 })
			after := posts.Load()
			testutil.Eventually(t, 5*time.Second, "three more probes", func() bool { return posts.Load() >= after+3 })
			select {
			case <-c.Done():
				t.Fatalf("one failed probe ended the session: %v", c.Err())
			default:
			}
			if _, err := c.CallTool(context.Background(), "echo", map[string]any{"text": "x"}); err != nil {
				t.Errorf("a call after the failed probe: %v", err)
			}
		})
	}
}

// A server that handles one request at a time queues the probe behind a
// long call; the progress it reports on that call is proof of life, so
// the call (kept alive by its progress past timeout_seconds) is answered.
func TestKeepAliveSparesAProgressingSerialServer(t *testing.T) {
	server := mcp.NewServer(&mcp.Implementation{Name: "serial"}, nil)
	var one sync.Mutex
	server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if strings.HasPrefix(method, "notifications/") {
				return next(ctx, method, req)
			}
			one.Lock()
			defer one.Unlock()
			return next(ctx, method, req)
		}
	})
	type noArgs struct{}
	mcp.AddTool(server, &mcp.Tool{Name: "long"}, func(ctx context.Context, req *mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, any, error) {
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for i := range 30 {
			<-tick.C
			if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: float64(i)}); err != nil {
				return nil, nil, err
			}
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil, nil
	})
	ct := serveInMemory(t, server)
	srv := config.Server{Name: "serial", Type: config.TypeLocal, Command: []string{"x"}, Enabled: true, TimeoutSeconds: 1, ProtocolVersion: "2025-11-25"}
	c, err := testDial(context.Background(), Options{Server: srv, Transport: ct, KeepAlive: testInterval})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.CallTool(context.Background(), "long", map[string]any{}); err != nil {
		t.Errorf("a 1.5 s call reporting progress every 50 ms on a server that answers in turn: %v", err)
	}
}

// A server whose one thread is busy for 1.5 s answers no probe, but a
// call is in flight well within its timeout_seconds (10): it is not
// killed, and the call is answered.
func TestKeepAliveSparesABusyServerWithinTheTimeout(t *testing.T) {
	busySpared(t, freezeServer("2025-11-25"), nil)
}

// busySpared dials opts (timeout_seconds 10, the test keepalive), waits
// for ready (if not nil) to hold, freezes the server 1.5 s on a call and
// checks that both that call and the next are answered.
func busySpared(t *testing.T, opts Options, ready func(*Conn) bool) {
	t.Helper()
	opts.Server.TimeoutSeconds = 10
	opts.KeepAlive = testInterval
	c, err := testDial(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { c.Close(); assertNoProcesses(t) }()
	if ready != nil {
		testutil.Eventually(t, 10*time.Second, "the server's setup", func() bool { return ready(c) })
	}
	if _, err := c.CallTool(context.Background(), exampleserver.FreezeToolName, map[string]any{"ms": 1500}); err != nil {
		t.Fatalf("a busy spell within timeout_seconds: %v", err)
	}
	if _, err := c.CallTool(context.Background(), "echo", map[string]any{"text": "answered after the busy spell"}); err != nil {
		t.Errorf("a call the busy server answers within timeout_seconds: %v", err)
	}
}

// A deadlocked server with calls in flight is declared lost once no call
// in flight may be what it is busy on — at most twice timeout_seconds
// into its silence, however many new calls keep arriving (one every
// 300 ms, each timing out after 1 s): the calls in flight then end with
// the session.
func TestKeepAliveFindsADeadlockUnderCalls(t *testing.T) {
	opts := freezeServer("")
	opts.Server.TimeoutSeconds = 1
	opts.KeepAlive = testInterval
	c, err := testDial(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { c.Close(); assertNoProcesses(t) }()
	if _, err := c.CallTool(context.Background(), exampleserver.FreezeToolName, map[string]any{}); err != nil {
		t.Fatal(err)
	}
	frozen := time.Now()
	ended := make(chan error, 100)
	var calls sync.WaitGroup
	launched := make(chan struct{})
	go func() {
		defer close(launched)
		tick := time.NewTicker(300 * time.Millisecond)
		defer tick.Stop()
		for range cap(ended) {
			calls.Go(func() {
				_, err := c.CallTool(context.Background(), "echo", map[string]any{"text": "never answered"})
				ended <- err
			})
			select {
			case <-c.Done():
				return
			case <-tick.C:
			}
		}
	}()
	awaitLost(t, c, frozen, 2*time.Second+testInterval, "a frozen server under a stream of calls")
	<-launched
	calls.Wait()
	close(ended)
	withSession := 0
	for err := range ended {
		switch {
		case err == nil:
			t.Error("a call was answered by a frozen server")
		case errors.Is(err, tools.ErrSessionClosed) && errors.Is(err, tools.ErrUnresponsive):
			withSession++
		}
	}
	if withSession == 0 {
		t.Error("no call in flight ended with the session (ErrSessionClosed, ErrUnresponsive)")
	}
}

// A server that answers one request at a time was last heard from well
// before a call began (the silence had lasted most of timeout_seconds): it
// then works on the call without a word, past timeout_seconds of silence,
// and is not killed while the call is within its own timeout_seconds; the
// call is answered.
func TestKeepAliveSparesACallBegunLateInTheSilence(t *testing.T) {
	opts := freezeServer("2025-11-25")
	opts.Server.TimeoutSeconds = 2
	opts.KeepAlive = testInterval
	c, err := testDial(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { c.Close(); assertNoProcesses(t) }()
	if _, err := c.CallTool(context.Background(), exampleserver.FreezeToolName, map[string]any{"ms": 1300}); err != nil {
		t.Fatal(err)
	}
	// As if the server had said nothing for 1.8 s before the call: an
	// unanswered probe queued behind a call that just ended, say.
	c.heard.last.Store(time.Now().Add(-1800 * time.Millisecond).UnixNano())
	if _, err := c.CallTool(context.Background(), "echo", map[string]any{"text": "answered after the busy spell"}); err != nil {
		t.Errorf("a call the busy server answers within timeout_seconds (2 s), 3 s into its silence: %v", err)
	}
}
