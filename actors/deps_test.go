package actors

import (
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
)

// TestRestartPolicyBackoff: the backoff starts at Initial (within the
// jitter), doubles, is capped at Max, and a zero field takes its default.
func TestRestartPolicyBackoff(t *testing.T) {
	within := func(d, center time.Duration, jitter float64) bool {
		return float64(d) >= float64(center)*(1-jitter) && float64(d) <= float64(center)*(1+jitter)
	}
	b := RestartPolicy{Initial: 100 * time.Millisecond, Max: 350 * time.Millisecond, Jitter: 0.1}.Backoff()
	for i, center := range []time.Duration{100, 200, 350, 350} {
		if d := b.NextBackOff(); !within(d, center*time.Millisecond, 0.1) {
			t.Errorf("delay %d = %v, want %v ±10 %%", i, d, center*time.Millisecond)
		}
	}
	b.Reset()
	if d := b.NextBackOff(); !within(d, 100*time.Millisecond, 0.1) {
		t.Errorf("after Reset: %v, want 100ms ±10 %%", d)
	}
	zero := RestartPolicy{}.Backoff()
	if zero.InitialInterval != 200*time.Millisecond || zero.MaxInterval != 30*time.Second || zero.RandomizationFactor != 0.2 || zero.Multiplier != 2 {
		t.Errorf("zero policy: %+v, want the defaults", zero)
	}
}

// TestDepsClock: the timers and times of Deps run on its Clock, and on
// the real clock when none is set.
func TestDepsClock(t *testing.T) {
	before := time.Now()
	if now := (&Deps{}).Now(); now.Before(before) || now.After(time.Now()) {
		t.Errorf("without a Clock, Now = %v, want the real time", now)
	}
	start := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	clock := clockwork.NewFakeClockAt(start)
	d := &Deps{Clock: clock}
	fired := make(chan struct{})
	d.AfterFunc(time.Minute, func() { close(fired) })
	clock.Advance(time.Minute - time.Nanosecond)
	select {
	case <-fired:
		t.Fatal("the timer fired before its time on the clock")
	default:
	}
	clock.Advance(time.Nanosecond)
	select {
	case <-fired:
	case <-time.After(10 * time.Second):
		t.Fatal("the timer did not fire once the clock passed it")
	}
	if got := d.Now(); !got.Equal(start.Add(time.Minute)) {
		t.Errorf("Now = %v, want the clock's %v", got, start.Add(time.Minute))
	}
	if got := d.Since(start); got != time.Minute {
		t.Errorf("Since = %v, want 1m on the clock", got)
	}
}
