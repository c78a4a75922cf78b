package mcpconn

import (
	"context"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"
)

// dialDeadline is the connect_timeout_seconds limit of a dial, which does not run
// while a login waits for the user: an OAuth consent takes as long as a
// person takes, and has its own limit (the callback actor's). The context
// ends with cause context.DeadlineExceeded when the limit is reached.
type dialDeadline struct {
	mu        sync.Mutex
	clock     clockwork.Clock
	timer     clockwork.Timer
	remaining time.Duration
	started   time.Time
	paused    int
	finished  bool
}

// withDialDeadline starts a deadline of d on clock (nil: the real clock).
func withDialDeadline(parent context.Context, clock clockwork.Clock, d time.Duration) (context.Context, *dialDeadline, context.CancelFunc) {
	if clock == nil {
		clock = clockwork.NewRealClock()
	}
	ctx, cancel := context.WithCancelCause(parent)
	dl := &dialDeadline{clock: clock, remaining: d, started: clock.Now()}
	dl.timer = clock.AfterFunc(d, func() { cancel(context.DeadlineExceeded) })
	return ctx, dl, func() {
		dl.finish()
		cancel(context.Canceled)
	}
}

// pause stops the clock until the matching resume.
func (dl *dialDeadline) pause() {
	dl.mu.Lock()
	defer dl.mu.Unlock()
	if dl.finished {
		return
	}
	if dl.paused == 0 && dl.timer.Stop() {
		dl.remaining -= dl.clock.Since(dl.started)
	}
	dl.paused++
}

func (dl *dialDeadline) resume() {
	dl.mu.Lock()
	defer dl.mu.Unlock()
	if dl.finished || dl.paused == 0 {
		return
	}
	dl.paused--
	if dl.paused == 0 {
		dl.started = dl.clock.Now()
		dl.timer.Reset(max(dl.remaining, 0))
	}
}

// finish ends the deadline: later pauses (a login during a call) are
// no-ops.
func (dl *dialDeadline) finish() {
	dl.mu.Lock()
	defer dl.mu.Unlock()
	dl.finished = true
	dl.timer.Stop()
}
