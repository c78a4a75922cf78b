package mcpconn

import (
	"context"
	"sync"
	"time"
)

// dialDeadline is the timeout_seconds limit of a dial, which does not run
// while a login waits for the user: an OAuth consent takes as long as a
// person takes, and has its own limit (the callback actor's). The context
// ends with cause context.DeadlineExceeded when the limit is reached.
type dialDeadline struct {
	mu        sync.Mutex
	timer     *time.Timer
	remaining time.Duration
	started   time.Time
	paused    int
	finished  bool
}

func withDialDeadline(parent context.Context, d time.Duration) (context.Context, *dialDeadline, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	dl := &dialDeadline{remaining: d, started: time.Now()}
	dl.timer = time.AfterFunc(d, func() { cancel(context.DeadlineExceeded) })
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
		dl.remaining -= time.Since(dl.started)
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
		dl.started = time.Now()
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
