package mcpconn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/internal/oauthflow"
	"github.com/openprogram/mcpvisor/internal/procs"
	"github.com/openprogram/mcpvisor/tools"
)

// The keepalive is ours, not the SDK's: ClientOptions.KeepAlive never runs
// on a 2026-07-28 session, and when it fires it ends the session with
// Close, which waits for the calls in flight — which a hung server never
// answers. Here one goroutine per ready Conn probes every interval, each
// probe bounded by the interval, so a server that stops answering is found
// within two intervals; its process group is killed first (EOF then fails
// every request in flight) and the session ended with ErrUnresponsive,
// which the owner sees as any lost session.

// statelessVersion is the first protocol version without ping (and
// without initialize): its sessions are probed with server/discover.
const statelessVersion = "2026-07-28"

// probeCursor is the cursor of the tools/list that probeMiddleware turns
// into a server/discover. A fixed cursor keeps the SDK's list cache, which
// is keyed by cursor, from answering the probe itself.
const probeCursor = "mcpvisor/keepalive-probe"

// probeKey marks the context of a probe's tools/list.
type probeKey struct{}

// probeMiddleware sends a marked tools/list (a probe) as server/discover
// instead: the SDK has no exported way to send that request, but its
// sending method table knows it. server/discover is the cheapest request
// every 2026-07-28 server must answer (it is how a session starts): no
// state, no side effect, an answer of a few hundred bytes. It carries the
// _meta triple (protocol version, client info, capabilities) the SDK has
// just put on the tools/list.
func probeMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		cs, ok := req.GetSession().(*mcp.ClientSession)
		if method != "tools/list" || ctx.Value(probeKey{}) == nil || !ok {
			return next(ctx, method, req)
		}
		params := &mcp.DiscoverParams{Meta: mcp.Meta(req.GetParams().GetMeta())}
		if _, err := next(ctx, "server/discover", &mcp.DiscoverRequest{Session: cs, Params: params}); err != nil {
			return nil, err
		}
		return &mcp.ListToolsResult{}, nil
	}
}

// probeName names the request a session is probed with: ping where the
// protocol has it, server/discover from 2026-07-28 on.
func (c *Conn) probeName() string {
	if c.cs.InitializeResult().ProtocolVersion >= statelessVersion {
		return "server/discover"
	}
	return "ping"
}

// probe sends one liveness request and reports whether the server
// answered it (see serverAnswered). Its context is marked so that a 401
// or 403 starts no login and waits for none (oauthflow.WithoutLogin).
func (c *Conn) probe(ctx context.Context) (bool, error) {
	ctx = oauthflow.WithoutLogin(ctx)
	var err error
	if c.probeName() == "ping" {
		err = c.cs.Ping(ctx, nil)
	} else {
		_, err = c.cs.ListTools(context.WithValue(ctx, probeKey{}, true), &mcp.ListToolsParams{Cursor: probeCursor})
	}
	return serverAnswered(err), err
}

// stoppedProbeWait bounds the probe sent to a server whose leader process
// is stopped: the stop makes the verdict quick, not certain (someone may
// continue it).
const stoppedProbeWait = time.Second

// startKeepAlive runs the keepalive of a ready Conn, unless interval ≤ 0.
// Close stops it and waits for it. It runs on the real clock, not
// Options.Clock: it measures how a server answers in real time, and a
// test's fake clock drives the lifecycle timers alone.
func (c *Conn) startKeepAlive(interval time.Duration) {
	k := &c.ka
	k.mu.Lock()
	defer k.mu.Unlock()
	if interval <= 0 || k.stopped { // off, or the session gone already
		k.stopped = true
		close(c.kaDone)
		return
	}
	k.interval = interval
	k.next = time.Now().Add(interval)
	k.timer = time.AfterFunc(interval, c.keepAliveTick)
}

// keepAliver is the state of a Conn's keepalive: a timer chain, not a
// goroutine (P2: a goroutine's stack on every idle server). Each tick runs
// on the timer's own goroutine and arms the next one when it is done, so
// probes still run one at a time, beside the calls (a probe is not a call:
// it takes no slot of max_concurrent_calls), each bounded by the interval.
// The ticks fall on the grid of a time.Ticker started with the keepalive,
// and a tick that falls during a probe is run at once when the probe is
// done, the ones after it dropped: the schedule of the ticker loop it
// replaces.
type keepAliver struct {
	mu           sync.Mutex
	timer        *time.Timer // nil until started
	interval     time.Duration
	next         time.Time // the grid point of the tick now due or running
	failedBefore bool      // the last probe went unanswered
	stopped      bool      // no tick is armed again
}

// keepAliveTick is one tick of the keepalive: a check, then the next tick
// armed, or the keepalive ended (Close, the session gone, a hung verdict).
func (c *Conn) keepAliveTick() {
	k := &c.ka
	k.mu.Lock()
	interval, failedBefore, stopped := k.interval, k.failedBefore, k.stopped
	k.mu.Unlock()
	if stopped || c.kaCtx.Err() != nil || isClosed(c.done) {
		c.endKeepAlive()
		return
	}
	started := time.Now()
	why, failed := c.check(interval, failedBefore)
	if c.kaCtx.Err() != nil {
		c.endKeepAlive()
		return
	}
	if why != nil {
		c.hung(why)
		c.endKeepAlive()
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.failedBefore = failed
	if k.stopped {
		close(c.kaDone)
		return
	}
	k.next = nextTick(k.next, started, interval)
	k.timer.Reset(time.Until(k.next))
}

// nextTick is the first point of the grid (next, next ± interval…) after
// started, the start of the tick just run: past already if its probe took
// its whole interval (the tick a ticker would have kept, run at once),
// and the ones the probe covered dropped.
func nextTick(next, started time.Time, interval time.Duration) time.Time {
	for !next.After(started) {
		next = next.Add(interval)
	}
	return next
}

// stopKeepAlive ends the keepalive (Close, or the session gone): an armed
// tick is cancelled, one running ends it when its check returns, and one
// not started yet never starts.
func (c *Conn) stopKeepAlive() {
	k := &c.ka
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.stopped {
		return // ended already (or off: kaDone closed then)
	}
	k.stopped = true
	if k.timer == nil {
		return // not started yet: startKeepAlive closes kaDone
	}
	if k.timer.Stop() {
		close(c.kaDone) // no tick runs: the chain ends here
	}
}

// endKeepAlive ends the chain from a tick: a later stopKeepAlive finds
// nothing to do.
func (c *Conn) endKeepAlive() {
	k := &c.ka
	k.mu.Lock()
	defer k.mu.Unlock()
	k.stopped = true
	close(c.kaDone)
}

// isClosed reports whether ch is closed.
func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// check probes the server once and says why it is hung (nil: it is not,
// or not yet) and whether the probe went unanswered. The rule:
//
//   - a probe the server answers, even with an error, proves it alive;
//   - its leader process in the stopped state shortens the probe to
//     min(interval, 1s): unanswered, with the leader still stopped, the
//     server is hung. A stopped descendant does not: it may be a worker
//     the server waits for on a call in flight, or one it does not need,
//     so the rules below judge the server (a busy serial server with a
//     stopped child is not killed within its call's timeout), and only
//     the verdict's error names the stop;
//   - otherwise an unanswered probe (no answer within the interval, or a
//     transport failure: connection refused, a 503 from a gateway) makes
//     it hung only if nothing at all was heard from the server for an
//     interval (progress and answers to calls are proof of life), the
//     failure is not a single quick one (a transient 503 is forgiven once:
//     the next probe decides, and any other error is judged the same
//     way), and no request in flight may be what it is busy on (see
//     mayBeBusy).
//
// So a server that stops answering with no request in flight is declared
// lost within two intervals, one with requests in flight after at most
// twice timeout_seconds of silence plus an interval.
func (c *Conn) check(interval time.Duration, failedBefore bool) (why error, failed bool) {
	stopped := c.proc.leaderStopped()
	wait := interval
	if stopped {
		wait = min(interval, stoppedProbeWait)
	}
	pctx, cancel := context.WithTimeout(c.kaCtx, wait)
	ok, err := c.probe(pctx)
	timedOut := pctx.Err() != nil
	cancel()
	if ok || c.kaCtx.Err() != nil {
		return nil, false
	}
	c.logger.Debug("keepalive probe unanswered", "probe", c.probeName(), "error", c.scrub.Error(err))
	if stopped && c.proc.leaderStopped() {
		return fmt.Errorf("its process is stopped (SIGSTOP or a terminal stop) and did not answer the keepalive %s within %s", c.probeName(), wait), true
	}
	silence := c.heard.silence()
	switch {
	case silence < interval, !timedOut && !failedBefore:
		return nil, true
	case c.mayBeBusy(silence):
		return nil, true
	}
	note := ""
	if c.proc.groupStopped() {
		note = " (a process of its group is stopped: SIGSTOP or a terminal stop)"
	}
	if timedOut {
		return fmt.Errorf("no answer to the keepalive %s within %s, and nothing heard from it for %s%s", c.probeName(), interval, silence.Round(time.Millisecond), note), true
	}
	return fmt.Errorf("the keepalive %s failed twice, and nothing heard from it for %s%s: %w", c.probeName(), silence.Round(time.Millisecond), note, err), true
}

// mayBeBusy reports whether a server silent for silence may be working on
// a request in flight (or one waiting for a slot), rather than hung: it
// has been silent for less than timeout_seconds, or a request began less
// than timeout_seconds ago and less than timeout_seconds into the silence.
// So a server that answers one request at a time is not killed while it
// works on a call within that call's timeout_seconds (a probe it has not
// answered since before the call began, the silence that began then, do
// not count against the call), and a stream of new calls, each timing out
// in turn, hides a deadlock for at most twice timeout_seconds.
func (c *Conn) mayBeBusy(silence time.Duration) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.inflight) == 0 {
		return false
	}
	if silence < c.timeout {
		return true
	}
	now := time.Now()
	heard := now.Add(-silence)
	for _, dl := range c.inflight {
		if now.Sub(dl.began) < c.timeout && dl.began.Sub(heard) < c.timeout {
			return true
		}
	}
	return false
}

// hung ends the session of a server that stopped answering. The process
// group is killed before the session is closed: the SDK's Close waits for
// the requests in flight, and only the EOF of a dead process ends them. A
// remote server's requests are cut likewise: its Close would send a
// DELETE the hung server does not answer either (the SDK waits 5s).
func (c *Conn) hung(why error) {
	err := fmt.Errorf("%w: %w", tools.ErrUnresponsive, why)
	// The reason is set before anything ends, so that the session's loss
	// and the calls in flight say it.
	c.endWithFirst(err, func() {
		c.proc.kill()
		if c.cut != nil {
			c.cut()
		}
	})
}

// errCut fails the requests of a remote server declared unresponsive.
var errCut = errors.New("the server was declared unresponsive")

// cutTransport fails every request once cut: those not sent yet at once,
// and those in flight (a stream's body included) by cancelling them. It
// holds the links of the requests in flight (see requestLink), which the
// cut cancels: a set, rather than a context each request would watch,
// costs a request no allocation.
type cutTransport struct {
	base  http.RoundTripper
	grace time.Duration // answeredGrace, but in tests

	mu    sync.Mutex
	cut   bool
	links map[*requestLink]struct{}
	held  int // links in their answered grace (at most maxHeldDrains)
}

// newCutTransport wraps base; the func cuts it.
func newCutTransport(base http.RoundTripper) (http.RoundTripper, func()) {
	t := &cutTransport{base: base, grace: answeredGrace, links: map[*requestLink]struct{}{}}
	return t, t.cutAll
}

func (t *cutTransport) cutAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cut = true
	for l := range t.links {
		l.cancel()
	}
	clear(t.links)
}

// hold takes a place among the drains held in their grace, if one is
// free.
func (t *cutTransport) hold() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.held >= maxHeldDrains {
		return false
	}
	t.held++
	return true
}

// unhold gives back a place that hold took.
func (t *cutTransport) unhold() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.held--
}

func (t *cutTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, link := linkRequest(req.Context(), t)
	if link == nil {
		return nil, errCut
	}
	resp, err := t.base.RoundTrip(req.WithContext(ctx))
	if err != nil {
		link.release()
		return nil, err
	}
	resp.Body = &cutBody{ReadCloser: resp.Body, link: link}
	return resp, nil
}

// cutBody releases its request's link when it is closed.
type cutBody struct {
	io.ReadCloser
	link *requestLink
}

func (b *cutBody) Close() error {
	err := b.ReadCloser.Close()
	b.link.release()
	return err
}

// leaderStopped reports whether the server's leader process is in the
// stopped state (Linux; false elsewhere and for remote servers).
func (t *stdioTransport) leaderStopped() bool {
	if t == nil {
		return false
	}
	return procs.Stopped(t.pid())
}

// groupStopped reports whether a process of the server's tree and group
// is in the stopped state (Linux; false elsewhere and for remote servers):
// a bounded look at the leader and its descendants (procs.GroupStopped).
func (t *stdioTransport) groupStopped() bool {
	if t == nil {
		return false
	}
	return procs.GroupStopped(t.pid())
}

// kill SIGKILLs the server's process group (terminates its job) at once; the stop sequence
// that follows reaps it and kills the marked processes outside the group.
// SIGKILL ends a stopped process too.
func (t *stdioTransport) kill() {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.conn != nil && !t.stopped {
		t.tree.kill(t.inner.Command.Process.Pid)
	}
}
