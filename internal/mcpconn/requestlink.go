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
	released bool
}

// linkRequest links a request sent with parent on t; nil once t was cut.
func linkRequest(parent context.Context, t *cutTransport) (context.Context, *requestLink) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(parent))
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

func (l *requestLink) parentEnded() {
	if !errors.Is(context.Cause(l.parent), errRequestOver) {
		l.cancel() // the caller gave up, or the deadline ended the request
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.released {
		l.grace = time.AfterFunc(answeredGrace, l.cancel)
	}
}

func (l *requestLink) release() {
	l.mu.Lock()
	l.released = true
	if l.grace != nil {
		l.grace.Stop()
	}
	l.mu.Unlock()
	l.t.mu.Lock()
	delete(l.t.links, l)
	l.t.mu.Unlock()
	l.unlinkEnd()
	l.cancel()
}
