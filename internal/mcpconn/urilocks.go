package mcpconn

import (
	"context"
	"sync"
)

// uriLocks serialise one session's subscribe and unsubscribe of each URI
// together with the check of whether the host wants it that decides
// them: the host's Conn.Subscribe and Conn.Unsubscribe and the
// reopener's "is it wanted? then subscribe, and undo it if it stopped
// being wanted meanwhile" take the URI's lock, so that the reopener's
// undo can never cancel a stream a new holder opened after its check.
// An entry lives while someone holds or waits for it: no entry is kept
// per URI ever subscribed.
//
// Lock order: the runtime takes its own per-URI lock, then this one
// (Conn.Subscribe); the holder of this one calls only Subscriptions.Wants
// and URIs, which take the runtime's set mutex and never its URI locks.
type uriLocks struct {
	mu sync.Mutex
	m  map[string]*uriLock
}

type uriLock struct {
	slot chan struct{} // one slot: held while full
	refs int           // holders and waiters
}

// lock takes uri's lock, or fails when ctx ends first. unlock releases it.
func (l *uriLocks) lock(ctx context.Context, uri string) (unlock func(), err error) {
	l.mu.Lock()
	if l.m == nil {
		l.m = map[string]*uriLock{}
	}
	u := l.m[uri]
	if u == nil {
		u = &uriLock{slot: make(chan struct{}, 1)}
		l.m[uri] = u
	}
	u.refs++
	l.mu.Unlock()
	release := func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if u.refs--; u.refs == 0 {
			delete(l.m, uri)
		}
	}
	select {
	case u.slot <- struct{}{}:
		return func() { <-u.slot; release() }, nil
	case <-ctx.Done():
		release()
		return nil, context.Cause(ctx)
	}
}

// users is how many hold or wait for uri's lock (for tests).
func (l *uriLocks) users(uri string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if u := l.m[uri]; u != nil {
		return u.refs
	}
	return 0
}
