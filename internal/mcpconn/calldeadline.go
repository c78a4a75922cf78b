package mcpconn

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"
)

// Why a request's deadline ended it (the cause of its context):
//   - errIdle: timeout_seconds passed with no answer and, if it ever had
//     any, no progress since the last report;
//   - errMaxCall: progress kept restarting the timeout until the call had
//     run max_call_seconds.
//   - errRequestOver: the request ended (stop): answered, or failed
//     otherwise.
var (
	errIdle        = errors.New("no answer within timeout_seconds")
	errMaxCall     = errors.New("still running at max_call_seconds")
	errRequestOver = errors.New("the request is over")
)

// requestDeadline is the deadline of one request: timeout_seconds from
// its start and, for a tool call, from each progress report the server
// sends for it, but never past max_call_seconds from its start (the TS
// SDK's resetTimeoutOnProgress and maxTotalTimeout). It is one timer on
// the Conn's clock (real time; this file's tests use a fake one), reset
// in place: no goroutine runs for a request until its timer fires, and
// stop releases the timer when the request ends (a tool call's goes back
// to the Conn, for the next call: see deadlineTimer). The timer ends the
// request's context with errIdle or errMaxCall as the cause.
type requestDeadline struct {
	clock  clockwork.Clock
	idle   time.Duration // timeout_seconds
	end    time.Time     // start + max_call_seconds: no restart goes past it
	cancel context.CancelCauseFunc
	began  time.Time // on the real clock, which the keepalive measures in

	timers timerPool // where timer goes back when the request ends; nil: nowhere

	mu         sync.Mutex
	timer      *deadlineTimer
	rearmed    bool      // progress reset the timer after it had fired: a firing may still be on its way
	due        time.Time // when the timer is set to end the request
	atEnd      bool      // due is end: the next firing is max_call_seconds'
	progressed bool      // a progress report restarted the timeout at least once
	stopped    bool
}

// startDeadline starts the deadline of a request of the Conn within
// parent: idle from now, restartable by progress up to max from now (max
// <= idle: no restart goes past idle).
func startDeadline(parent context.Context, clock clockwork.Clock, idle, limit time.Duration) (context.Context, *requestDeadline) {
	d := &requestDeadline{}
	return d.start(parent, clock, idle, limit, nil), d
}

// start is startDeadline for a deadline d in place (a zero one), part of
// a larger struct (toolCall), with its timer taken from timers (a
// Conn's, of *deadlineTimer on clock; nil: a new one) and given back
// there when the request ends if nothing can touch it any more (see
// stop): it returns the request's context.
func (d *requestDeadline) start(parent context.Context, clock clockwork.Clock, idle, limit time.Duration, timers timerPool) context.Context {
	ctx, cancel := context.WithCancelCause(parent)
	now := clock.Now()
	d.clock, d.idle, d.end, d.due, d.cancel, d.began, d.timers = clock, idle, now.Add(max(limit, idle)), now.Add(idle), cancel, time.Now(), timers
	d.mu.Lock() // the timer may fire before it is stored
	defer d.mu.Unlock()
	if timers != nil {
		if t, ok := timers.Get().(*deadlineTimer); ok {
			t.serve(d)
			d.timer = t
			t.timer.Reset(idle)
			return ctx
		}
	}
	t := &deadlineTimer{d: d}
	t.timer = clock.AfterFunc(idle, t.fire)
	d.timer = t
	return ctx
}

// timerPool holds the *deadlineTimer a Conn reuses: a sync.Pool (tests
// use one that keeps what it is given).
type timerPool interface {
	Get() any
	Put(x any)
}

// deadlineTimer is a request deadline's timer with its callback bound
// once, so that a Conn reuses it from request to request (Conn.timers):
// a timer and its callback are two allocations per call otherwise. It
// serves one deadline at a time; it goes back to the pool only when
// Stop proved that no firing for that deadline is pending or on its way
// (requestDeadline.stop), so a firing reaches only the deadline it was
// armed for.
type deadlineTimer struct {
	timer clockwork.Timer

	mu sync.Mutex
	d  *requestDeadline // the deadline it is armed for
}

// serve arms t for d (before its Reset).
func (t *deadlineTimer) serve(d *requestDeadline) {
	t.mu.Lock()
	t.d = d
	t.mu.Unlock()
}

func (t *deadlineTimer) fire() {
	t.mu.Lock()
	d := t.d
	t.mu.Unlock()
	if d != nil { // a stray firing of a timer back in the pool
		d.fire()
	}
}

func (d *requestDeadline) fire() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stopped || d.clock.Now().Before(d.due) {
		// Over, or progress moved the deadline while this firing waited
		// for the lock (the reset timer fires again).
		return
	}
	d.stopped = true
	if d.atEnd {
		d.cancel(errMaxCall)
	} else {
		d.cancel(errIdle)
	}
}

// progress restarts the timeout: the server said the request is still
// being worked on. It only resets a timer, so that it may run on the
// connection's read loop.
func (d *requestDeadline) progress() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.restart()
}

// restart is progress with d.mu held.
func (d *requestDeadline) restart() {
	if d.stopped || d.atEnd {
		return
	}
	d.progressed = true
	wait := d.idle
	now := d.clock.Now()
	if left := d.end.Sub(now); left <= wait {
		wait, d.atEnd = max(left, 0), true
	}
	d.due = now.Add(wait)
	if !d.timer.timer.Reset(wait) {
		// It had fired: that firing, which finds the deadline moved, may
		// not have reached fire yet, so the timer must not serve another
		// request (see stop).
		d.rearmed = true
	}
}

// stop releases the timer and ends the request's context (the request is
// over) with cause errRequestOver, by which an HTTP request tells that
// it may finish reading its answer (see linkRequest).
//
// The timer goes back to the Conn's pool only if Stop cancelled a
// pending firing and no earlier firing can still be on its way (it
// never fired before progress rearmed it): then nothing calls it for
// this request any more. Else it is left to the garbage collector.
func (d *requestDeadline) stop() {
	d.mu.Lock()
	reuse := false
	if !d.stopped {
		d.stopped = true
		reuse = d.timer.timer.Stop() && !d.rearmed && d.timers != nil
	}
	d.mu.Unlock()
	d.cancel(errRequestOver)
	if reuse {
		// Pooled without its request, so that the pool holds no finished
		// call (its context, progress callback and structured bytes).
		d.timer.serve(nil)
		d.timers.Put(d.timer)
	}
}

// hadProgress reports whether progress ever restarted the timeout.
func (d *requestDeadline) hadProgress() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.progressed
}
