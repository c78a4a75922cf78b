package mcpconn

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
)

// ended waits (bounded) for ctx to end, as a fired timer's func runs on a
// goroutine of its own, and returns its cause. It waits on ctx, never
// sleeps: a deadline that does not fire fails the test after 5 s.
func ended(t *testing.T, ctx context.Context) error {
	t.Helper()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-time.After(5 * time.Second):
		t.Fatal("the deadline did not end the request")
		return nil
	}
}

// notEnded checks that dl has not ended the request of ctx, and would
// not now: it runs the firing that dl's timer makes (on a goroutine of
// its own with a fake clock, so a check of ctx alone could pass before a
// wrong firing ran) itself, at the fake clock's time.
func notEnded(t *testing.T, ctx context.Context, dl *requestDeadline, when string) {
	t.Helper()
	dl.fire()
	if ctx.Err() != nil {
		t.Fatalf("ended %s: %v", when, context.Cause(ctx))
	}
}

// Progress restarts timeout_seconds, never past max_call_seconds from the
// start; the cause says which limit ended the request.
func TestDeadlineRestartsOnProgressUpToMaxCall(t *testing.T) {
	clock := clockwork.NewFakeClock()
	ctx, dl := startDeadline(context.Background(), clock, time.Second, 3*time.Second)
	defer dl.stop()
	clock.Advance(900 * time.Millisecond)
	notEnded(t, ctx, dl, "at 0.9 s (timeout 1 s)")
	dl.progress() // due at 1.9 s
	clock.Advance(900 * time.Millisecond)
	notEnded(t, ctx, dl, "at 1.8 s, 0.9 s after a report (timeout 1 s)")
	dl.progress() // due at 2.8 s
	clock.Advance(900 * time.Millisecond)
	dl.progress() // 2.7 s: the restart would pass 3 s, so due at 3 s
	clock.Advance(299 * time.Millisecond)
	notEnded(t, ctx, dl, "at 2.999 s, before max_call_seconds (3 s)")
	dl.progress() // at the end already: no restart
	clock.Advance(time.Millisecond)
	if cause := ended(t, ctx); !errors.Is(cause, errMaxCall) {
		t.Fatalf("cause %v, want errMaxCall", cause)
	}
	if !dl.hadProgress() {
		t.Fatal("hadProgress false after reports")
	}
}

// Without progress a request ends at timeout_seconds, whatever
// max_call_seconds; after progress, silence ends it at timeout_seconds
// from the last report.
func TestDeadlineWithoutProgressIsTimeout(t *testing.T) {
	clock := clockwork.NewFakeClock()
	ctx, dl := startDeadline(context.Background(), clock, time.Second, time.Hour)
	defer dl.stop()
	clock.Advance(999 * time.Millisecond)
	notEnded(t, ctx, dl, "at 0.999 s (timeout 1 s)")
	clock.Advance(time.Millisecond)
	if cause := ended(t, ctx); !errors.Is(cause, errIdle) || dl.hadProgress() {
		t.Fatalf("cause %v (progress %v), want errIdle without progress", cause, dl.hadProgress())
	}

	ctx, dl = startDeadline(context.Background(), clock, time.Second, time.Hour)
	defer dl.stop()
	clock.Advance(500 * time.Millisecond)
	dl.progress()
	clock.Advance(999 * time.Millisecond)
	notEnded(t, ctx, dl, "0.999 s after the last report (timeout 1 s)")
	clock.Advance(time.Millisecond)
	if cause := ended(t, ctx); !errors.Is(cause, errIdle) || !dl.hadProgress() {
		t.Fatalf("cause %v (progress %v), want errIdle after progress", cause, dl.hadProgress())
	}
}

// A stopped deadline never fires, and a late report does not start it
// again.
func TestStoppedDeadlineStaysStopped(t *testing.T) {
	clock := clockwork.NewFakeClock()
	ctx, dl := startDeadline(context.Background(), clock, time.Second, 10*time.Second)
	dl.stop()
	dl.progress()
	clock.Advance(time.Minute)
	dl.fire() // what the timer would do, had stop left it running
	if cause := ended(t, ctx); cause != errRequestOver || dl.hadProgress() {
		t.Fatalf("cause %v (progress %v), want errRequestOver and no progress", cause, dl.hadProgress())
	}
}

// keptTimers is a timerPool that keeps every timer given back (a
// sync.Pool may drop one, and does at random under -race).
type keptTimers struct {
	mu     sync.Mutex
	timers []any
}

func (p *keptTimers) Get() any {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.timers) == 0 {
		return nil
	}
	t := p.timers[len(p.timers)-1]
	p.timers = p.timers[:len(p.timers)-1]
	return t
}

func (p *keptTimers) Put(x any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.timers = append(p.timers, x)
}

func (p *keptTimers) size() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.timers)
}

// A deadline stopped before its timer fired gives the timer back, and
// the next request's deadline runs on it: it fires for that one, and the
// first request keeps its own end (errRequestOver).
func TestDeadlineTimerServesTheNextRequest(t *testing.T) {
	clock := clockwork.NewFakeClock()
	pool := &keptTimers{}
	var first requestDeadline
	ctx1 := first.start(context.Background(), clock, time.Second, time.Hour, pool)
	first.stop()
	if pool.size() != 1 {
		t.Fatalf("%d timers given back, want 1", pool.size())
	}
	var second requestDeadline
	ctx2 := second.start(context.Background(), clock, 2*time.Second, time.Hour, pool)
	defer second.stop()
	if second.timer != first.timer || pool.size() != 0 {
		t.Fatal("the second deadline did not take the timer given back")
	}
	clock.Advance(1999 * time.Millisecond)
	notEnded(t, ctx2, &second, "at 1.999 s (timeout 2 s) on a reused timer")
	clock.Advance(time.Millisecond)
	if cause := ended(t, ctx2); !errors.Is(cause, errIdle) {
		t.Fatalf("cause %v, want errIdle", cause)
	}
	if cause := context.Cause(ctx1); cause != errRequestOver {
		t.Fatalf("the first request's cause became %v", cause)
	}
	second.stop()
	if pool.size() != 0 {
		t.Fatal("a timer that fired was given back")
	}
}

// A timer that fired, then was rearmed by progress before its firing
// reached the deadline, is not given back: that firing is still on its
// way and must not reach another request.
func TestRearmedTimerIsNotReused(t *testing.T) {
	clock := clockwork.NewFakeClock()
	pool := &keptTimers{}
	var dl requestDeadline
	ctx := dl.start(context.Background(), clock, time.Second, time.Hour, pool)
	dl.mu.Lock()
	clock.Advance(time.Second) // the timer fires: its func waits for dl.mu
	dl.restart()               // a report came first
	rearmed := dl.rearmed
	dl.mu.Unlock()
	if !rearmed {
		t.Fatal("a reset after the timer fired is not marked")
	}
	notEnded(t, ctx, &dl, "after a report that came before the firing")
	dl.stop()
	if pool.size() != 0 {
		t.Fatal("a rearmed timer was given back")
	}
	if cause := ended(t, ctx); cause != errRequestOver {
		t.Fatalf("cause %v, want errRequestOver", cause)
	}
}
