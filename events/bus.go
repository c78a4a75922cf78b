package events

import (
	"sync"
	"time"
)

// Defaults of Options.
const (
	DefaultBuffer  = 256
	DefaultHistory = 1024
)

// Options configure a Bus. The zero value is the default for every field.
type Options struct {
	// Reducer, when set, is called with every event, synchronously inside
	// Emit and in Seq order, before any subscriber sees it. The status
	// board is the reducer: it can never fall behind or miss an event, so
	// what it answers is exact as soon as Emit returns. It must be quick
	// and must not call Emit or Subscribe (the Bus holds its lock).
	//
	// The reducer returns the event as every later consumer sees it: it
	// may complete what only it knows (the board fills in a StateChanged's
	// From and Restarts), so that subscribers read the same facts as
	// Status(). It must keep the event's type, Seq and Time. It returns
	// nil for an event that says nothing new (a state change to the state
	// shown already): the Bus then drops it, keeps no trace of it in the
	// history and reuses its Seq.
	Reducer func(Event) Event
	// Now is the clock that stamps Time; default time.Now.
	Now func() time.Time
	// Buffer is each subscriber's buffer, in events; default
	// DefaultBuffer (256). A subscriber that falls further behind misses
	// events and gets one Dropped for them.
	Buffer int
	// History is how many lifecycle events (every type but ServerLog,
	// RequestRefused, ResourceUpdated and StartingOutput) the
	// Bus keeps for subscribers that start from a sequence number;
	// default DefaultHistory (1024).
	History int
}

func (o *Options) setDefaults() {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Buffer <= 0 {
		o.Buffer = DefaultBuffer
	}
	if o.History <= 0 {
		o.History = DefaultHistory
	}
}

// Bus is the runtime's one event stream: one per Runtime, no package
// state. Emit never blocks on a subscriber. All methods are safe for
// concurrent use.
type Bus struct {
	opts Options

	mu      sync.Mutex
	seq     uint64 // of the last event emitted
	history ring
	// floor is the lowest Seq from which the history still holds every
	// lifecycle event.
	floor  uint64
	subs   map[*Subscription]struct{}
	closed bool
}

// NewBus returns a Bus; opts may be nil.
func NewBus(opts *Options) *Bus {
	var o Options
	if opts != nil {
		o = *opts
	}
	o.setDefaults()
	return &Bus{opts: o, history: newRing(o.History), floor: 1, subs: map[*Subscription]struct{}{}}
}

// Emit stamps e with the next Seq and the clock's Time, applies the
// Reducer, keeps e in the history (unless it is a ServerLog, a
// RequestRefused or a ResourceUpdated) and hands it
// to every subscriber whose filter it passes, without waiting for any of
// them. Emit after Close still applies the Reducer, so status stays exact
// through a shutdown, but no subscriber is left to see it.
//
// Dropped is made by subscriptions, not emitted; Emit ignores one. A nil
// Bus discards every event (tests of a single actor need none).
func (b *Bus) Emit(e Event) {
	if _, ok := e.(Dropped); ok || e == nil || b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.seq++
	e = e.stamp(b.seq, b.opts.Now())
	if b.opts.Reducer != nil {
		if e = b.opts.Reducer(e); e == nil {
			b.seq-- // nobody saw it: the stream stays gapless
			return
		}
	}
	if inHistory(e) {
		if old := b.history.push(e); old != nil {
			b.floor = old.Head().Seq + 1
		}
	}
	for s := range b.subs {
		s.offer(e)
	}
}

// Tally applies the Reducer to e and nothing else: e takes no Seq (it is
// stamped with the clock's Time and Seq 0), is not kept and reaches no
// subscriber. It is for an event of a flood that its emitter rate-limits
// (a refused request) but whose count the status must still see exactly;
// the emitter says how many it tallied in the next event it emits. A nil
// Bus discards e.
func (b *Bus) Tally(e Event) {
	if _, ok := e.(Dropped); ok || e == nil || b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	e = e.stamp(0, b.opts.Now())
	if b.opts.Reducer != nil {
		b.opts.Reducer(e)
	}
}

// inHistory reports whether e is a lifecycle event, kept in the history:
// every type but the four a server can make as often as it likes (its
// log lines, its refused requests, its resource updates, its stderr while
// it starts), so that a chatty server cannot push lifecycle events out of
// it. Each is bounded at its source: log lines and refused requests by a
// rate limit, resource updates by coalescing per URI (at most one per URI
// per 250 ms, see mcpconn.UpdateInterval), starting output to the newest
// line at most every mcpconn.StartingInterval.
func inHistory(e Event) bool {
	switch e.(type) {
	case ServerLog, RequestRefused, ResourceUpdated, ResourcesChanged, StartingOutput:
		return false
	}
	return true
}

// Close ends every subscription: each Next returns what is still buffered
// and then ErrClosed. A Subscribe after Close returns a subscription that
// is already ended. Close may be called more than once, concurrently.
func (b *Bus) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	for s := range b.subs {
		s.end(false)
		delete(b.subs, s)
	}
}

// LastSeq returns the Seq of the last event emitted, 0 before the first.
func (b *Bus) LastSeq() uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.seq
}

func (b *Bus) unsubscribe(s *Subscription) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.subs, s)
}
