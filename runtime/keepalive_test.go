package runtime

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/exampleserver"
	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/status"
)

// keepAliveTest is the interval of the keepalive tests, and lostWithin
// how soon after it stops answering a server must be declared lost: two
// intervals, plus slack for a loaded two-core machine.
const (
	keepAliveTest = 200 * time.Millisecond
	lostWithin    = 2*keepAliveTest + time.Second
)

// keepAliveOptions probe every keepAliveTest and restart after 50ms.
func keepAliveOptions() Options {
	return Options{KeepAlive: keepAliveTest, Restart: RestartPolicy{Initial: 50 * time.Millisecond}}
}

// freeze makes name stop answering once its session's own first requests
// (the prompts listing that follows ready) are answered: a request in
// flight when the server froze may be what it is busy on, and excuses its
// silence for timeout_seconds (see Options.KeepAlive).
func freeze(t *testing.T, rt *testRuntime, name string, args map[string]any) {
	t.Helper()
	rt.awaitCatalog(t, name, "the prompts listed", func() bool { return len(rt.Prompts()) > 0 })
	mustCall(t, rt, name+"__"+exampleserver.FreezeToolName, args)
}

// awaitUnresponsive waits for name's session to be lost as unresponsive
// within lostWithin of since, then for it to be ready again through the
// backoff, and returns its status then. A stdio server's process must have
// been SIGKILLed at once, not ended by the stop sequence a grace later.
func awaitUnresponsive(t *testing.T, rt *testRuntime, sub *events.Subscription, name string, since time.Time) status.Server {
	t.Helper()
	lost := testutil.Await(t, sub, 10*time.Second, name+"'s session lost", func(events.SessionLost) bool { return true })
	if took := time.Since(since); took > lostWithin {
		t.Errorf("%s declared lost %v after it stopped answering, want within %v", name, took, lostWithin)
	}
	if st, _ := rt.Server(name); st.Type == config.TypeLocal && lost.ExitStatus != "signal: killed" {
		t.Errorf("%s's process ended with %q, want it SIGKILLed by the keepalive", name, lost.ExitStatus)
	}
	backoff := testutil.Await(t, sub, 10*time.Second, name+" in backoff", func(e events.StateChanged) bool { return e.To == string(status.Backoff) })
	if backoff.ErrorKind != status.KindUnresponsive {
		t.Errorf("%s lost with %q (kind %q), want kind %q", name, lost.Error, backoff.ErrorKind, status.KindUnresponsive)
	}
	return rt.waitBack(t, name)
}

// A deadlocked server (its process runs, it answers nothing) is found by
// the probe on both protocol versions, its process group killed, and it
// comes back through the backoff as a new process.
func TestKeepAliveRestartsADeadlockedServer(t *testing.T) {
	for _, pin := range []string{"", "2025-11-25"} {
		t.Run("pin="+pin, func(t *testing.T) {
			srv := exampleServer("ka", "-freeze-tool")
			srv.ProtocolVersion = pin
			rt := start(t, keepAliveOptions(), srv)
			pid := readyPID(t, rt, "ka")
			sub := rt.subscribe(t, "ka")
			freeze(t, rt, "ka", map[string]any{})
			st := awaitUnresponsive(t, rt, sub, "ka", time.Now())
			if st.PID == pid || len(testutil.LiveInGroup(pid)) > 0 {
				t.Errorf("PID %d after the restart (was %d), group left %v", st.PID, pid, testutil.LiveInGroup(pid))
			}
			mustCall(t, rt, "ka__echo", map[string]any{"text": "back"})
		})
	}
}

// Keepalive off (negative): a server that stops answering stays ready and
// receives no probe (the probe count before it froze is zero).
func TestKeepAliveOffSendsNoProbe(t *testing.T) {
	srv := exampleServer("quiet", "-freeze-tool")
	srv.ProtocolVersion = "2025-11-25" // its probe is ping: none at all is expected
	rt := start(t, Options{KeepAlive: -1}, srv)
	rt.waitReady(t, "quiet")
	// A call as long as ten intervals of the tests' keepalive.
	mustCall(t, rt, "quiet__sleep", map[string]any{"ms": (10 * keepAliveTest).Milliseconds()})
	res := mustCall(t, rt, "quiet__"+exampleserver.ProbesToolName, map[string]any{})
	if got := res.Content[0].Text; got != `{"ping":0,"discover":0}` {
		t.Errorf("probes with keepalive off = %s, want none", got)
	}
}

// A remote server (Streamable HTTP, SSE) whose answers stop: the probe
// times out, the session is ended at once (no process to kill; its
// requests are cut, so no DELETE waits on the hung server) and it
// reconnects through the backoff to a fresh session.
func TestKeepAliveReconnectsAnUnresponsiveRemote(t *testing.T) {
	for _, kind := range []string{config.TypeHTTP, config.TypeSSE} {
		t.Run(kind, func(t *testing.T) {
			var mu sync.Mutex
			var servers []*mcp.Server
			getServer := func(*http.Request) *mcp.Server {
				mu.Lock()
				defer mu.Unlock()
				servers = append(servers, exampleserver.NewServer(exampleserver.Options{FreezeTool: true}))
				return servers[len(servers)-1]
			}
			var h http.Handler = mcp.NewStreamableHTTPHandler(getServer, nil)
			if kind == config.TypeSSE {
				h = mcp.NewSSEHandler(getServer, nil)
			}
			web := httptest.NewServer(h)
			t.Cleanup(func() {
				// After the runtime's shutdown (LIFO). The frozen session
				// got no DELETE (its requests were cut): close it here.
				web.Close()
				mu.Lock()
				defer mu.Unlock()
				for _, srv := range servers {
					for ss := range srv.Sessions() {
						ss.Close()
					}
				}
			})
			rt := start(t, keepAliveOptions(), config.Server{Name: "web", Type: kind, URL: web.URL, Enabled: true})
			rt.waitReady(t, "web")
			sub := rt.subscribe(t, "web")
			// In this process, so not for good: its held handlers must end.
			freeze(t, rt, "web", map[string]any{"ms": 3000})
			awaitUnresponsive(t, rt, sub, "web", time.Now())
			mustCall(t, rt, "web__echo", map[string]any{"text": "back"})
		})
	}
}
