package events

import (
	"context"
	"errors"
	"sync"
)

// ErrClosed is what Next returns once its subscription or its Bus is
// closed (and, after the Bus's Close, the buffer is drained).
var ErrClosed = errors.New("events: subscription closed")

// SubscribeOptions choose what a subscription sees. The zero value is
// every event from the next one on.
type SubscribeOptions struct {
	// Server, when set, keeps only events whose Header.Server is it
	// (events about the runtime as a whole are left out too).
	Server string
	// From, when set, starts from the history: the subscription first gets
	// the kept lifecycle events with Seq >= From, then the live ones.
	// When the history no longer reaches back to From, a Dropped comes
	// first. A console resuming after the last event it saw asks for
	// From = that Seq + 1.
	From uint64
	// Buffer, when set, is this subscription's buffer in events instead
	// of the Bus's Options.Buffer: a consumer that must not miss
	// lifecycle events behind a burst of server logs (the runtime's log)
	// asks for more.
	Buffer int
}

// Subscription is one consumer's view of a Bus. Read it with Next.
//
// It is a pull API rather than a channel: a channel cannot tell a reader
// that it missed events until a later event arrives (or a goroutine per
// subscriber waits to tell it), while Next hands over the Dropped the
// moment the reader has caught up with its buffer; and ctx gives the
// reader its own deadline and cancel. No goroutine runs for a
// subscription.
type Subscription struct {
	bus  *Bus
	opts SubscribeOptions

	mu  sync.Mutex
	buf ring
	// missed counts the events that found the buffer full since the last
	// Dropped; lastMissed is the newest of them.
	missed     uint64
	lastMissed Event
	// ready has a token when buf or missed changed, so that a waiting
	// Next looks again; done is closed when the subscription ends.
	ready, done chan struct{}
	// ended: by the Bus's Close (drain first) or by Close (at once).
	ended, closed bool
}

// Subscribe returns a new subscription. Its Close frees it; the Bus's
// Close ends it too.
func (b *Bus) Subscribe(opts SubscribeOptions) *Subscription {
	b.mu.Lock()
	defer b.mu.Unlock()
	var replay []Event
	var gap Event
	if opts.From != 0 {
		if opts.From < b.floor {
			// The last sequence number that can no longer be replayed is
			// floor-1; its time is not kept, so the gap's Time is that of
			// the oldest event still held (or now).
			t := b.opts.Now()
			if b.history.len() > 0 {
				t = b.history.at(0).Head().Time
			}
			gap = Dropped{Header: Header{Server: opts.Server, Seq: b.floor - 1, Time: t}, N: b.floor - opts.From}
		}
		for i := range b.history.len() {
			if e := b.history.at(i); e.Head().Seq >= opts.From && opts.matches(e) {
				replay = append(replay, e)
			}
		}
	}
	if opts.Buffer <= 0 {
		opts.Buffer = b.opts.Buffer
	}
	s := &Subscription{
		bus:   b,
		opts:  opts,
		buf:   newRing(max(opts.Buffer, len(replay)+1)),
		ready: make(chan struct{}, 1),
		done:  make(chan struct{}),
	}
	if gap != nil {
		s.buf.push(gap)
	}
	for _, e := range replay {
		s.buf.push(e)
	}
	if b.closed {
		s.end(false)
		return s
	}
	b.subs[s] = struct{}{}
	return s
}

func (o SubscribeOptions) matches(e Event) bool {
	return o.Server == "" || e.Head().Server == o.Server
}

// offer hands e over without blocking; the Bus holds its lock.
func (s *Subscription) offer(e Event) {
	if !s.opts.matches(e) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.missed == 0 && s.buf.len() < s.opts.Buffer:
		s.buf.push(e)
	case s.missed > 0 && s.buf.len()+2 <= s.opts.Buffer:
		// Room for the gap and e: the reader sees them in order.
		s.buf.push(s.dropped())
		s.buf.push(e)
	default:
		s.missed++
		s.lastMissed = e
	}
	s.wake()
}

// dropped turns the missed count into a Dropped and resets it.
func (s *Subscription) dropped() Event {
	h := s.lastMissed.Head()
	d := Dropped{Header: Header{Server: s.opts.Server, Seq: h.Seq, Time: h.Time}, N: s.missed}
	s.missed, s.lastMissed = 0, nil
	return d
}

func (s *Subscription) wake() {
	select {
	case s.ready <- struct{}{}:
	default:
	}
}

// Next returns the next event, waiting until there is one, ctx is done
// (ctx.Err()) or the subscription ends (ErrClosed). After Close it returns
// ErrClosed at once; after the Bus's Close it first returns what is
// buffered. Next is meant for one reader; concurrent calls each get
// different events.
func (s *Subscription) Next(ctx context.Context) (Event, error) {
	for {
		s.mu.Lock()
		switch {
		case s.closed:
			s.mu.Unlock()
			return nil, ErrClosed
		case s.buf.len() > 0:
			e := s.buf.pop()
			s.mu.Unlock()
			return e, nil
		case s.missed > 0:
			e := s.dropped()
			s.mu.Unlock()
			return e, nil
		case s.ended:
			s.mu.Unlock()
			return nil, ErrClosed
		}
		s.mu.Unlock()
		select {
		case <-s.ready:
		case <-s.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Close frees the subscription: the Bus stops offering it events and Next
// returns ErrClosed. Close may be called more than once, concurrently.
func (s *Subscription) Close() {
	s.bus.unsubscribe(s)
	s.end(true)
}

// end marks the subscription ended; closed (by its own Close) also lets
// the buffer go.
func (s *Subscription) end(closed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if closed && !s.closed {
		s.closed = true
		s.buf, s.missed, s.lastMissed = ring{}, 0, nil
	}
	if !s.ended {
		s.ended = true
		close(s.done)
	}
}
