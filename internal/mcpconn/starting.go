package mcpconn

import (
	"sync"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/openprogram/mcpvisor/events"
)

// StartingInterval is the least time between the start of a connect and
// its first events.StartingOutput, and between two of them: a server that
// connects within it makes none, and one that prints hundreds of lines a
// second while it downloads makes at most four events a second, each with
// its newest line.
const StartingInterval = 250 * time.Millisecond

// startingOutput emits the stderr lines of a server that is connecting as
// events.StartingOutput, throttled to one per StartingInterval. A line
// that arrives too soon waits for the interval to end and is replaced by
// any newer one, so that the last line written is the last one shown.
// After close it emits nothing: the connect is over, and the status shows
// the state it ended in instead.
type startingOutput struct {
	clock clockwork.Clock
	emit  func(events.Event)
	name  string

	mu      sync.Mutex
	latest  string
	pending bool // latest waits for timer
	timer   clockwork.Timer
	last    time.Time // when the last event went out, or the connect began
	closed  bool
}

func newStartingOutput(clock clockwork.Clock, emit func(events.Event), name string) *startingOutput {
	return &startingOutput{clock: clock, emit: emit, name: name, last: clock.Now()}
}

// offer takes a new stderr line (scrubbed and bounded already).
func (s *startingOutput) offer(line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.latest = line
	if s.pending {
		return
	}
	wait := StartingInterval - s.clock.Since(s.last)
	if wait <= 0 {
		s.send()
		return
	}
	s.pending = true
	s.timer = s.clock.AfterFunc(wait, s.flush)
}

func (s *startingOutput) flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || !s.pending {
		return
	}
	s.send()
}

// send emits latest; s.mu is held, so that close waits for an event on
// its way (Emit does not block).
func (s *startingOutput) send() {
	s.pending, s.last = false, s.clock.Now()
	s.emit(events.StartingOutput{Header: events.Header{Server: s.name}, Line: s.latest})
}

// close ends the connect's output: nothing is emitted once it returns.
func (s *startingOutput) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if s.timer != nil {
		s.timer.Stop()
	}
}
