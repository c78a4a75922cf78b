package mcpconn

import (
	"sync"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/openprogram/mcpvisor/events"
)

// UpdateInterval is how often at most one URI's resource updates become
// events: the first update of a quiet URI is an event at once; those that
// follow within the interval are coalesced into one, emitted when it ends
// (the URI is all an update says, so the last stands for them all). A
// server that sends thousands a second cannot flood the event stream and
// push its subscribers' other events out.
const UpdateInterval = 250 * time.Millisecond

// updateThrottle coalesces one Conn's events.ResourceUpdated per URI. It
// holds an entry per URI updated within the last interval, and only URIs
// the host subscribed to reach it, so it is bounded by the subscriptions.
// A coalesced update is emitted only if the host still wants its URI
// then (wants), so no update follows the end of its last subscription.
type updateThrottle struct {
	clock clockwork.Clock
	emit  func(events.Event)
	wants func(uri string) bool // nil: every URI

	mu     sync.Mutex
	closed bool
	uris   map[string]*throttledURI
}

// throttledURI is a URI inside its interval: pending is the update to
// emit when it ends, if one came.
type throttledURI struct {
	timer   clockwork.Timer
	pending *events.ResourceUpdated
}

func newUpdateThrottle(clock clockwork.Clock, emit func(events.Event), wants func(uri string) bool) *updateThrottle {
	if clock == nil {
		clock = clockwork.NewRealClock()
	}
	return &updateThrottle{clock: clock, emit: emit, wants: wants, uris: map[string]*throttledURI{}}
}

// offer emits e, an update of uri as the server wrote it (e carries it
// scrubbed), now if uri was quiet, else keeps it for the end of the
// URI's interval. It does not block.
func (t *updateThrottle) offer(uri string, e events.ResourceUpdated) {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return
	}
	if st := t.uris[uri]; st != nil {
		st.pending = &e
		t.mu.Unlock()
		return
	}
	t.uris[uri] = &throttledURI{timer: t.clock.AfterFunc(UpdateInterval, func() { t.tick(uri) })}
	t.mu.Unlock()
	t.emit(e)
}

// tick ends uri's interval: its pending update is emitted and starts the
// next one; without one (or if the host no longer wants the URI) the URI
// is quiet again.
func (t *updateThrottle) tick(uri string) {
	// Asked before mu: Wants takes the host's lock, never ours.
	wanted := t.wants == nil || t.wants(uri)
	t.mu.Lock()
	st := t.uris[uri]
	if t.closed || st == nil {
		t.mu.Unlock()
		return
	}
	e := st.pending
	if e == nil || !wanted {
		delete(t.uris, uri)
		t.mu.Unlock()
		return
	}
	st.pending = nil
	st.timer = t.clock.AfterFunc(UpdateInterval, func() { t.tick(uri) })
	t.mu.Unlock()
	t.emit(*e)
}

// close drops what is pending and stops the timers: the session is gone.
func (t *updateThrottle) close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	for _, st := range t.uris {
		st.timer.Stop()
	}
	t.uris = nil
}
