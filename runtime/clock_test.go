package runtime

import (
	"context"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/jonboulle/clockwork"

	"github.com/openprogram/mcpvisor/messages"
)

// Tests of what the lifecycle timers do (restart backoff, respawn, login
// timeout, a dial's timeout_seconds) run them on a fake clock: they wait for a timer to be set and
// advance the clock past it, instead of waiting real time, and they prove
// that nothing will retry by showing that no timer is pending.

// fakeClock sets a fake clock on opts and returns it. It starts far from
// the real time, so that a time taken from the real clock shows.
func fakeClock(opts *Options) *clockwork.FakeClock {
	fc := clockwork.NewFakeClockAt(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	opts.clock = fc
	return fc
}

// clockWait bounds the real time a test waits for a timer to be set.
const clockWait = 10 * time.Second

// waitTimers waits until at least n timers are pending on fc.
func waitTimers(t *testing.T, fc *clockwork.FakeClock, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), clockWait)
	defer cancel()
	if err := fc.BlockUntilContext(ctx, n); err != nil {
		t.Fatalf("fewer than %d timers set within %s", n, clockWait)
	}
}

// advanceTo moves fc to at (a next_retry_at), firing the timers due by then.
func advanceTo(fc *clockwork.FakeClock, at time.Time) { fc.Advance(at.Sub(fc.Now())) }

// pending reports whether at least n timers are pending on fc.
func pending(fc *clockwork.FakeClock, n int) bool {
	// With a context that is already done, BlockUntilContext answers at
	// once: nil if at least n timers are pending.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return fc.BlockUntilContext(ctx, n) == nil
}

// noTimers fails the test if a timer is pending on fc: nothing is
// scheduled to happen by itself, however long one waits.
func noTimers(t *testing.T, fc *clockwork.FakeClock) {
	t.Helper()
	if pending(fc, 1) {
		t.Fatal("a timer is pending: something will happen by itself")
	}
}

// settle returns once the actor at path (under the actor system's root,
// "manager" or "manager/NAME") has handled every message sent to it
// before: the Describe it answers queues behind them.
func (rt *testRuntime) settle(t *testing.T, path string) {
	t.Helper()
	reply := make(chan messages.Description, 1)
	rt.system.Root.Send(actor.NewPID(rt.system.Address(), path), messages.Describe{Reply: reply})
	select {
	case <-reply:
	case <-time.After(clockWait):
		t.Fatalf("%s did not describe itself within %s", path, clockWait)
	}
}
