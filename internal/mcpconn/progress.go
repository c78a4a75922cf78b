package mcpconn

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/internal/redact"
	"github.com/openprogram/mcpvisor/tools"
)

// progressRouter maps the progress token of each tool call of one
// connection to the call: a report restarts the call's timeout and
// becomes the call's latest report, which reaches its host callback, if
// any. Tokens are strings ("mcpvisor-N", unique per connection): a number
// would come back as a float64.
//
// A report is handled on the SDK's one goroutine for incoming
// notifications, whose queue has no bound: whatever it does per report
// must be cheap, or a server that floods progress makes that queue (and
// the heap) grow without bound. So handling a report only looks up its
// call, resets a timer and stores the report (its message cut, see
// rawProgress); the host gets the reports from a goroutine of the call's
// own (progressCall.offer), latest wins: a slow host callback skips
// reports instead of queueing them.
//
// The map holds the calls in flight (bounded by the caller, and by
// max_concurrent_calls) and, for progressGrace after it ended, a call
// whose host asked for progress. A report whose token is not in the map —
// a call that ended, a token the server made up, a number — does nothing.
type progressRouter struct {
	clock  clockwork.Clock // runs the grace timers, like the calls' deadlines
	scrub  *redact.Scrubber
	logger *slog.Logger

	next   atomic.Uint64
	mu     sync.Mutex
	calls  map[string]*progressCall
	closed chan struct{} // closed by close: no report reaches a host from then on
}

func newProgressRouter(clock clockwork.Clock, scrub *redact.Scrubber, logger *slog.Logger) *progressRouter {
	return &progressRouter{clock: clock, scrub: scrub, logger: logger, calls: map[string]*progressCall{}, closed: make(chan struct{})}
}

// progressCall is one call's entry: its deadline, its host's callback
// (nil if none) and the delivery of its reports to that callback.
type progressCall struct {
	token    string          // the call's progress token
	ctx      context.Context // the caller's: end waits for the host no longer than it lasts
	router   *progressRouter
	deadline *requestDeadline
	report   func(tools.Progress)
	grace    clockwork.Timer // once the call ended: drops the entry

	mu      sync.Mutex
	latest  rawProgress // the newest report the host has not been given
	pending bool        // latest is set
	idle    chan struct{}
	closed  bool // the grace ended or the Conn closed: nothing more is delivered
}

// rawProgress is a report as the server sent it, its message cut to
// maxLineBytes plus the longest secret form (so that a secret crossing
// the cut is still seen whole when it is scrubbed): the host gets it
// scrubbed and cut to maxLineBytes (redact.Scrubber.Line). A copy, so that
// it does not hold the server's whole notification.
type rawProgress struct {
	progress, total float64
	message         string
	cut             bool // message was longer
}

// progressGrace is how long a call's progress callback still receives
// reports after the call returned.
const progressGrace = 250 * time.Millisecond

// register gives a call its entry, whose token goes in the request.
// done must be called when the call ends (its deadline stopped first, so
// that a report no longer touches it): see progressCall.end for what the
// host gets then.
func (r *progressRouter) register(ctx context.Context, report func(tools.Progress), dl *requestDeadline) *progressCall {
	e := &progressCall{}
	r.add(e, ctx, report, dl)
	return e
}

// add is register for an entry e in place (a zero one), part of a larger
// struct (toolCall): the token is its one allocation (built in place),
// and done is a method, not a closure.
func (r *progressRouter) add(e *progressCall, ctx context.Context, report func(tools.Progress), dl *requestDeadline) {
	var buf [len(tokenPrefix) + 20]byte // 20: the digits of the largest uint64
	e.token = string(strconv.AppendUint(append(buf[:0], tokenPrefix...), r.next.Add(1), 10))
	e.ctx, e.router, e.deadline, e.report = ctx, r, dl, report
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.isClosed() { // else the call fails at once: the session is closing
		r.calls[e.token] = e
	}
}

// tokenPrefix starts every progress token.
const tokenPrefix = "mcpvisor-"

// done ends the call's entry (see register).
func (e *progressCall) done() { e.router.end(e) }

// end is a call's done. A call without a host callback leaves the map at
// once. One with a callback stays in the map for progressGrace: the SDK
// hands a call its result at once but queues notifications for its
// handler goroutine, so the server's last reports, sent before the
// result, can be handled just after it; they reach the callback during
// the grace. end first hands the host the latest report received, waiting
// for the callback running, but no longer than the grace (nor once e.ctx
// ended or the Conn closed): a callback that blocks must not hold the
// call past its own timeout. One that never returns keeps its goroutine
// (the host's bug); what it missed is dropped when the grace ends.
func (r *progressRouter) end(e *progressCall) {
	r.mu.Lock()
	if e.report == nil || r.isClosed() {
		delete(r.calls, e.token)
		r.mu.Unlock()
		return
	}
	over := make(chan struct{})
	e.grace = r.clock.AfterFunc(progressGrace, func() {
		defer close(over)
		r.mu.Lock()
		delete(r.calls, e.token)
		r.mu.Unlock()
		// A report still pending behind a busy callback is dropped too:
		// none reaches the host after the grace (nor after Close).
		e.mu.Lock()
		e.closed = true
		e.mu.Unlock()
	})
	r.mu.Unlock()
	e.flush(e.ctx, r.closed, over)
}

// deliver handles one progress notification (see progressRouter: it must
// stay cheap). Nothing is done for a report that is not a call's: not even
// its message is looked at.
func (r *progressRouter) deliver(p *mcp.ProgressNotificationParams) {
	if p == nil {
		return
	}
	token, ok := p.ProgressToken.(string)
	if !ok {
		return
	}
	r.mu.Lock()
	e := r.calls[token]
	r.mu.Unlock()
	if e == nil {
		return
	}
	e.deadline.progress() // a no-op once the call ended
	if e.report == nil {
		return
	}
	raw := rawProgress{progress: p.Progress, total: p.Total, message: p.Message}
	if keep := maxLineBytes + r.scrub.Longest(); len(raw.message) > keep {
		raw.message, raw.cut = strings.Clone(raw.message[:keep]), true
	}
	e.offer(raw, r.hand)
}

// hand gives one report to a host callback, scrubbed and bounded.
func (r *progressRouter) hand(report func(tools.Progress), raw rawProgress) {
	msg := r.scrub.Line(raw.message, maxLineBytes, raw.cut)
	r.logger.Debug("progress", "progress", raw.progress, "total", raw.total, "message", msg)
	report(tools.Progress{Progress: raw.progress, Total: raw.total, Message: msg})
}

// offer makes raw the call's latest report and starts the call's delivery
// goroutine unless it runs: there is at most one per call, which hands
// the host the latest report until none is left, then ends.
func (e *progressCall) offer(raw rawProgress, hand func(func(tools.Progress), rawProgress)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return
	}
	e.latest, e.pending = raw, true
	if e.idle != nil {
		return // the goroutine running takes it
	}
	idle := make(chan struct{})
	e.idle = idle
	go func() {
		defer close(idle)
		for {
			e.mu.Lock()
			if !e.pending || e.closed {
				e.idle = nil
				e.mu.Unlock()
				return
			}
			raw := e.latest
			e.pending, e.latest = false, rawProgress{}
			e.mu.Unlock()
			hand(e.report, raw)
		}
	}()
}

// flush waits until the host has the latest report offered so far, unless
// ctx ends or closed or over is closed first.
func (e *progressCall) flush(ctx context.Context, closed, over <-chan struct{}) {
	e.mu.Lock()
	idle := e.idle
	e.mu.Unlock()
	if idle == nil {
		return
	}
	select {
	case <-idle:
	case <-ctx.Done():
	case <-closed:
	case <-over:
	}
}

// close drops every call: no report reaches a host from now on (a
// callback running finishes), and no grace timer is left running. Close
// calls it.
func (r *progressRouter) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.isClosed() {
		return
	}
	close(r.closed)
	for token, e := range r.calls {
		if e.grace != nil {
			e.grace.Stop()
		}
		e.mu.Lock()
		e.closed = true
		e.mu.Unlock()
		delete(r.calls, token)
	}
}

// isClosed reports whether close ran.
func (r *progressRouter) isClosed() bool {
	select {
	case <-r.closed:
		return true
	default:
		return false
	}
}

// size is how many calls the router holds (tests).
func (r *progressRouter) size() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.calls)
}
