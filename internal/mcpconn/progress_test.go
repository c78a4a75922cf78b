package mcpconn

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/internal/redact"
	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/tools"
)

// dialProgress dials the example server with its progress tools (and
// flags), with timeout_seconds 1 and max_call_seconds maxCall (0: the
// default).
func dialProgress(t *testing.T, maxCall int, flags ...string) *Conn {
	t.Helper()
	srv := server(append([]string{demoBin, "serve", "-progress-tools"}, flags...)...)
	srv.TimeoutSeconds, srv.MaxCallSeconds = 1, maxCall
	var work sync.WaitGroup
	c, err := testDial(context.Background(), Options{Server: srv, Grace: 100 * time.Millisecond, Go: work.Go})
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() {
		c.Close()
		work.Wait()
		assertNoProcesses(t)
	})
	return c
}

// reports records the time of each progress report a call's host
// callback gets.
type reports struct {
	mu sync.Mutex
	at []time.Time
}

func (r *reports) ctx(parent context.Context) context.Context {
	return tools.WithProgress(parent, func(tools.Progress) {
		r.mu.Lock()
		r.at = append(r.at, time.Now())
		r.mu.Unlock()
	})
}

func (r *reports) last() (time.Time, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.at) == 0 {
		return time.Time{}, 0
	}
	return r.at[len(r.at)-1], len(r.at)
}

// assertCallsGone: once calls ended, the router keeps no call without a
// host callback, and one with a callback only for progressGrace; the Conn
// tracks no request.
func assertCallsGone(t *testing.T, c *Conn) {
	t.Helper()
	testutil.Eventually(t, 5*progressGrace, "the router to drop the ended calls", func() bool { return c.progress.size() == 0 })
	c.mu.Lock()
	inflight := len(c.inflight)
	c.mu.Unlock()
	if n := c.progress.size(); n != 0 || inflight != 0 {
		t.Fatalf("after the calls: %d progress entries, %d requests tracked; want none", n, inflight)
	}
}

// A call whose server keeps reporting progress runs past timeout_seconds
// (1 s) and succeeds; its reports reach the host's callback through the
// token the runtime sent.
func TestProgressKeepsACallAlive(t *testing.T) {
	c := dialProgress(t, 0)
	var r reports
	start := time.Now()
	res, err := c.CallTool(r.ctx(t.Context()), "progress", map[string]any{"period_ms": 200, "total_ms": 2500})
	if err != nil {
		t.Fatalf("a call reporting progress every 200 ms for 2.5 s, timeout_seconds 1: %v", err)
	}
	if took := time.Since(start); took < 2*time.Second {
		t.Fatalf("the call took %v, want about 2.5 s", took)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; !strings.HasPrefix(text, "sent ") {
		t.Fatalf("result %q", text)
	}
	if _, n := r.last(); n < 5 {
		t.Fatalf("the host's callback got %d reports, want about 12", n)
	}
	assertCallsGone(t, c)
}

// A call that reports progress and then goes silent times out
// timeout_seconds after its last report, with an error that says so.
func TestSilenceAfterProgressTimesOut(t *testing.T) {
	c := dialProgress(t, 0)
	var r reports
	_, err := c.CallTool(r.ctx(t.Context()), "progress_silent", map[string]any{"reports": 3, "period_ms": 300})
	ended := time.Now()
	last, n := r.last()
	if !errors.Is(err, tools.ErrTimeout) || !strings.Contains(err.Error(), "since its last progress report") || !strings.Contains(err.Error(), "timeout_seconds") {
		t.Fatalf("err = %v, want ErrTimeout after the last progress report", err)
	}
	if n != 3 {
		t.Fatalf("%d reports, want 3", n)
	}
	if gap := ended.Sub(last); gap < 900*time.Millisecond || gap > 2*time.Second {
		t.Fatalf("the call ended %v after its last report, want about timeout_seconds (1 s)", gap)
	}
	assertCallsGone(t, c)
}

// A call that reports progress forever is cut at max_call_seconds, with
// an error naming it.
func TestProgressForeverIsCutAtMaxCall(t *testing.T) {
	c := dialProgress(t, 2)
	// The test's own bound: a call that is never cut fails here instead of
	// hanging the test.
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	start := time.Now()
	_, err := c.CallTool(ctx, "progress", map[string]any{"period_ms": 200, "total_ms": 0})
	took := time.Since(start)
	if !errors.Is(err, tools.ErrTimeout) || !strings.Contains(err.Error(), "max_call_seconds") {
		t.Fatalf("err = %v, want ErrTimeout naming max_call_seconds", err)
	}
	if took < 1900*time.Millisecond || took > 3500*time.Millisecond {
		t.Fatalf("cut after %v, want about max_call_seconds (2 s)", took)
	}
	// The session is fine, and a call without progress keeps timeout_seconds.
	start = time.Now()
	_, err = c.CallTool(t.Context(), "progress_silent", map[string]any{"reports": 0, "period_ms": 1})
	if took := time.Since(start); !errors.Is(err, tools.ErrTimeout) || strings.Contains(err.Error(), "last progress report") || strings.Contains(err.Error(), "max_call_seconds") || took > 1900*time.Millisecond {
		t.Fatalf("a silent call: err = %v after %v, want the plain timeout_seconds error after about 1 s", err, took)
	}
	assertCallsGone(t, c)
}

// Every call carries a progress token of its own, a string, whether or
// not its host asked for progress; the log level a server that logs
// takes from the request rides along.
func TestEveryCallCarriesAProgressToken(t *testing.T) {
	c := dialProgress(t, 0)
	seen := map[string]bool{}
	for i, ctx := range []context.Context{t.Context(), (&reports{}).ctx(t.Context()), t.Context()} {
		res, err := c.CallTool(ctx, "meta", map[string]any{})
		if err != nil {
			t.Fatalf("meta: %v", err)
		}
		var meta map[string]any
		if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &meta); err != nil {
			t.Fatalf("meta %q: %v", res.Content[0].(*mcp.TextContent).Text, err)
		}
		token, ok := meta["progressToken"].(string)
		if !ok || token == "" || seen[token] {
			t.Fatalf("call %d: _meta = %v, want a progressToken string of its own", i, meta)
		}
		seen[token] = true
	}
	assertCallsGone(t, c)
}

// A report for a token the router does not know (a call that ended, one
// the server made up, a number) touches no call.
func TestUnknownProgressTokenDoesNothing(t *testing.T) {
	r := newProgressRouter(clockwork.NewFakeClock(), redact.New(), slog.New(slog.DiscardHandler))
	defer r.close()
	var got atomic.Int32
	ctx, dl := startDeadline(t.Context(), clockwork.NewFakeClock(), time.Second, 10*time.Second)
	call := r.register(t.Context(), func(tools.Progress) { got.Add(1) }, dl)
	token, done := call.token, call.done
	for _, tok := range []any{"mcpvisor-999", 1.0, token + "x"} {
		r.deliver(&mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1})
	}
	if got.Load() != 0 || dl.hadProgress() {
		t.Fatalf("unknown tokens reached the call: %d reports, progress %v", got.Load(), dl.hadProgress())
	}
	dl.stop()
	done()
	r.deliver(&mcp.ProgressNotificationParams{ProgressToken: token, Progress: 1})
	if dl.hadProgress() || context.Cause(ctx) != errRequestOver {
		t.Fatalf("a report after the call ended touched its deadline (cause %v)", context.Cause(ctx))
	}
}
