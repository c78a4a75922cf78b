package mcpconn

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
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

// A single failed probe (one 503 from a gateway) is forgiven when the
// next one is answered.
func TestKeepAliveForgivesOneTransientFailure(t *testing.T) {
	h := remoteExample(t)
	var fail, failed atomic.Int32
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && fail.CompareAndSwap(1, 0) {
			failed.Add(1)
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
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
	testutil.Eventually(t, 5*time.Second, "the 503", func() bool { return failed.Load() == 1 })
	select {
	case <-c.Done():
		t.Fatalf("one 503 ended the session: %v", c.Err())
	case <-time.After(5 * testInterval):
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
	opts := freezeServer("2025-11-25")
	opts.Server.TimeoutSeconds = 10
	opts.KeepAlive = testInterval
	c, err := testDial(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { c.Close(); assertNoProcesses(t) }()
	if _, err := c.CallTool(context.Background(), exampleserver.FreezeToolName, map[string]any{"ms": 1500}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CallTool(context.Background(), "echo", map[string]any{"text": "answered after the busy spell"}); err != nil {
		t.Errorf("a call the busy server answers within timeout_seconds: %v", err)
	}
}

// A deadlocked server with calls in flight is declared lost once it has
// been silent for timeout_seconds, however many new calls keep arriving:
// the call sent later ends with the session.
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
	first := make(chan error, 1)
	go func() {
		_, err := c.CallTool(context.Background(), "echo", map[string]any{"text": "never answered"})
		first <- err
	}()
	late := make(chan error, 1)
	go func() {
		<-time.After(3 * testInterval)
		_, err := c.CallTool(context.Background(), "echo", map[string]any{"text": "never answered either"})
		late <- err
	}()
	awaitLost(t, c, frozen, time.Second+testInterval, "a frozen server with calls in flight")
	if err := <-first; err == nil {
		t.Error("the first call was answered by a frozen server")
	}
	if err := <-late; !errors.Is(err, tools.ErrSessionClosed) || !errors.Is(err, tools.ErrUnresponsive) {
		t.Errorf("the later call: %v, want it ended with the session (ErrSessionClosed, ErrUnresponsive)", err)
	}
}
