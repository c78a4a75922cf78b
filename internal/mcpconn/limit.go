package mcpconn

import (
	"context"
	"errors"
)

// limiter bounds the tool calls in flight on one Conn to the server's
// max_concurrent_calls: a counting semaphore whose slots are the buffer of
// a channel, built once at Dial.
//
// A nil *limiter is unlimited (max_concurrent_calls 0, the default):
// acquire and release do nothing, so an unlimited server pays nothing per
// call. A limited one pays a channel send and receive, and no allocation.
//
// Waiting calls get a slot in arrival order: a freed slot goes straight to
// the call that has waited longest (the Go runtime queues blocked senders
// first in, first out), never to a newcomer.
type limiter struct {
	slots chan struct{}
}

// newLimiter returns a limiter of n slots, or nil (unlimited) for n <= 0.
func newLimiter(n int) *limiter {
	if n <= 0 {
		return nil
	}
	return &limiter{slots: make(chan struct{}, n)}
}

// errGone is acquire's answer when the transport ended while it waited.
var errGone = errors.New("session gone while waiting for a call slot")

// acquire takes a slot, waiting while all of them are taken. A waiting
// call gives up when ctx ends (it returns ctx.Err()) or gone is closed
// (errGone); it has then sent nothing to the server.
//
// CallTool waits with the call's own context, which carries the
// timeout_seconds deadline, so the limit applies to the call as a whole,
// time in the queue included. An agent host sets timeout_seconds as the
// longest it will wait for an answer, and the agent is blocked for all of
// it, queue or not. Were the queue not counted, single-flight behind a hung
// call would chain: the k-th call in line could wait k times
// timeout_seconds, and the caller could not know. Counted, every call
// answers within timeout_seconds whatever the load, and a call that ran out
// of time in the queue says so (raise max_concurrent_calls, not the
// timeout). The cost is that a call that queued has less than
// timeout_seconds left on the server; a deadline is a promise to the
// caller, not a budget for the server.
func (l *limiter) acquire(ctx context.Context, gone <-chan struct{}) error {
	if l == nil {
		return nil
	}
	select { // a free slot is taken even if ctx has just ended
	case l.slots <- struct{}{}:
		return nil
	default:
	}
	select {
	case l.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-gone:
		return errGone
	}
}

// release frees a slot taken by acquire.
func (l *limiter) release() {
	if l != nil {
		<-l.slots
	}
}

// limit returns the number of slots, 0 for unlimited.
func (l *limiter) limit() int {
	if l == nil {
		return 0
	}
	return cap(l.slots)
}
