package mcpconn

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/openprogram/mcpvisor/events"
)

// recorder collects emitted events.
type recorder struct {
	mu  sync.Mutex
	got []events.Event
	new chan struct{}
}

func newRecorder() *recorder { return &recorder{new: make(chan struct{}, 100)} }

func (r *recorder) emit(e events.Event) {
	r.mu.Lock()
	r.got = append(r.got, e)
	r.mu.Unlock()
	r.new <- struct{}{}
}

func (r *recorder) lines() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.got {
		out = append(out, e.(events.StartingOutput).Line)
	}
	return out
}

// await waits (bounded) for the next emitted event.
func (r *recorder) await(t *testing.T, what string) {
	t.Helper()
	select {
	case <-r.new:
	case <-time.After(5 * time.Second):
		t.Fatalf("no event: %s", what)
	}
}

// A connect that prints makes no event in its first StartingInterval;
// then a burst of lines makes one event with the newest line at once, and
// one more, with the newest again, when the next interval ends; nothing
// after close.
func TestStartingOutputIsThrottledToTheNewestLine(t *testing.T) {
	clock := clockwork.NewFakeClock()
	r := newRecorder()
	s := newStartingOutput(clock, r.emit, "npx")
	s.offer("line 0")
	s.offer("line 1")
	if got := r.lines(); len(got) != 0 {
		t.Fatalf("events %q at the connect's start, want none yet", got)
	}
	clock.Advance(StartingInterval)
	r.await(t, "the first interval's newest line")
	for i := 2; i <= 100; i++ {
		s.offer(fmt.Sprintf("line %d", i))
	}
	if got := r.lines(); len(got) != 1 || got[0] != "line 1" {
		t.Fatalf("after a burst of 99 more: %q, want just line 1 yet", got)
	}
	clock.Advance(StartingInterval)
	r.await(t, "the newest line when the interval ended")
	if got := r.lines(); len(got) != 2 || got[1] != "line 100" || r.got[1].Head().Server != "npx" {
		t.Fatalf("events %q, want line 1 then line 100 of npx", got)
	}
	s.offer("too soon") // waits for the interval
	s.close()
	s.offer("after close")
	clock.Advance(time.Minute)
	s.flush() // what the pending line's timer does (on a goroutine of its own), run here
	select {
	case <-r.new:
		t.Fatalf("emitted after close: %q", r.lines())
	default:
	}
}
