package mcpconn

import (
	"context"
	"errors"
	"sync"
	"time"
)

// answeredGrace is how long the HTTP request of a request that is over
// (its answer came, see errRequestOver) may still read its response
// before it is cancelled. The SDK hands a call its answer as soon as the
// answer's event arrived, while its reader goroutine still reads the end
// of the stream; cancelling the request then drops the connection (an
// HTTP/1.1 body not read to its end cannot be reused), and the next
// request dials a new one: about one call in ten did, each dial costing
// far more than the call. A server that keeps the stream open after the
// answer loses it after the grace.
const answeredGrace = time.Second

// maxHeldDrains is how many answered requests of one session may be in
// their grace at once; beyond it, one is cancelled at once. A drain takes
// microseconds, so a few suffice even with many callers; a server that
// keeps every call's stream open after the answer would otherwise make
// us hold a socket, a goroutine and a timer per call for the grace.
const maxHeldDrains = 8

// requestLink ties the context of one HTTP request of a remote session to
// the context it was sent with (parent: the request's, which ends when
// its call does) and to the session's cut (cutTransport): the cut cancels
// it at once; the end of parent at once too, unless parent ended because
// the request is over (cause errRequestOver), when it gets answeredGrace
// to finish reading. release, once the body is closed, frees all of it.
type requestLink struct {
	cancel    context.CancelFunc
	parent    context.Context
	t         *cutTransport
	unlinkEnd func() bool

	mu       sync.Mutex
	grace    *time.Timer
	held     bool // counted in t.held
	released bool
}

// linkRequest links a request sent with parent on t; nil once t was cut.
func linkRequest(parent context.Context, t *cutTransport) (context.Context, *requestLink) {
	ctx, cancel := context.WithCancel(detached{parent})
	l := &requestLink{cancel: cancel, parent: parent, t: t}
	t.mu.Lock()
	if t.cut {
		t.mu.Unlock()
		cancel()
		return nil, nil
	}
	t.links[l] = struct{}{}
	t.mu.Unlock()
	l.unlinkEnd = context.AfterFunc(parent, l.parentEnded)
	return ctx, l
}

// detached is parent's values and deadline without its cancellation:
// context.WithoutCancel, but the transport still sees the caller's
// deadline (a dial is bounded by it), while only the link ends the request
// (see parentEnded). One allocation, as WithoutCancel's.
type detached struct{ parent context.Context }

func (d detached) Deadline() (time.Time, bool) { return d.parent.Deadline() }
func (detached) Done() <-chan struct{}         { return nil }
func (detached) Err() error                    { return nil }
func (d detached) Value(key any) any           { return d.parent.Value(key) }

func (l *requestLink) parentEnded() {
	if !errors.Is(context.Cause(l.parent), errRequestOver) {
		l.cancel() // the caller gave up, or the deadline ended the request
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.released {
		return
	}
	if !l.t.hold() {
		l.cancel() // maxHeldDrains in their grace already
		return
	}
	l.held = true
	l.grace = time.AfterFunc(l.t.grace, l.graceOver)
}

// graceOver ends a request that read no end of its answer in its grace.
func (l *requestLink) graceOver() {
	l.cancel()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.unhold()
}

// unhold gives back the request's place among the held drains; l.mu is
// held.
func (l *requestLink) unhold() {
	if l.held {
		l.held = false
		l.t.unhold()
	}
}

func (l *requestLink) release() {
	l.mu.Lock()
	l.released = true
	if l.grace != nil {
		l.grace.Stop()
	}
	l.unhold()
	l.mu.Unlock()
	l.t.mu.Lock()
	delete(l.t.links, l)
	l.t.mu.Unlock()
	l.unlinkEnd()
	l.cancel()
}
