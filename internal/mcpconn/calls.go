package mcpconn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/tools"
)

// CallTool calls a tool by its original name on this session, bounded by
// the server's timeout and by Close. Every call carries a progress token
// of its own: each progress report the server sends for it restarts its
// timeout_seconds, up to max_call_seconds from its start, and reaches the
// callback of ctx (tools.WithProgress) if it has one, coalesced to the
// newest while the callback is busy (see progressRouter). Calls run
// concurrently; with max_concurrent_calls set, a call beyond the limit
// waits for a slot, and that wait counts towards the timeout (see
// limiter.acquire). Cancelling ctx returns at once; the server gets
// notifications/cancelled.
func (c *Conn) CallTool(ctx context.Context, name string, args any) (*mcp.CallToolResult, error) {
	res, _, err := c.callTool(ctx, name, args, false)
	return res, err
}

// callTool is CallTool and, with structured, CallToolJSON: it also
// returns the result's structuredContent as sent, where the wire tap
// sees it.
func (c *Conn) callTool(ctx context.Context, name string, args any, structured bool) (res *mcp.CallToolResult, raw json.RawMessage, err error) {
	call := &toolCall{}
	// The slot is attached whenever there is a tap, structured or not: it
	// is what forgets the tap's pending entry of a call never answered
	// (timed out, cancelled), which would otherwise stay for the session.
	reqCtx := call.start(c, ctx, c.tap != nil)
	if slot := call.ctx.slot; slot != nil {
		defer c.tap.forget(slot)
	}
	defer call.progress.done()
	err = c.run(ctx, reqCtx, &call.deadline, op{verb: "calling", arg: name}, func(callCtx context.Context) error {
		// A fresh params value and Meta per call: the SDK writes into them.
		params := &mcp.CallToolParams{Name: name, Arguments: args, Meta: mcp.Meta{}}
		if c.logs {
			// From protocol 2026-07-28 on, a server takes the log level of
			// what it logs during a request from the request itself (see
			// perCallLogLevel).
			params.Meta[mcp.MetaKeyLogLevel] = serverLogLevel
		}
		params.SetProgressToken(call.progress.token)
		params.Meta = c.withTraceMeta(callCtx, params.Meta)
		res, err = c.cs.CallTool(callCtx, params)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	// A call the SDK retried for input (MRTR, protocol 2026-07-28) shares
	// its context: the slot holds the last answer, the one returned.
	if p := call.slot.raw.Load(); p != nil {
		raw = *p
	}
	return res, raw, nil
}

// op names a request in its errors: `calling "echo"`, `listing tools`.
// It is formatted only when the request fails, so that a call that
// succeeds costs no formatting.
type op struct {
	verb string
	arg  string // quoted after verb if set
}

func (o op) String() string {
	if o.arg == "" {
		return o.verb
	}
	return o.verb + " " + strconv.Quote(o.arg)
}

// do runs one request on the session, a tool call or any other: within
// timeout_seconds, in a slot of max_concurrent_calls, and cancelled by
// Close (the SDK's Close waits for outgoing requests). Its error says
// why in the caller's terms and is scrubbed where it may carry the
// server's words.
func (c *Conn) do(ctx context.Context, what op, f func(ctx context.Context) error) error {
	reqCtx, dl := startDeadline(ctx, c.clock, c.timeout, c.timeout)
	return c.run(ctx, reqCtx, dl, what, f)
}

// run is do for a request whose deadline dl (of context reqCtx, within
// ctx) is already running; it stops dl.
func (c *Conn) run(ctx, reqCtx context.Context, dl *requestDeadline, what op, f func(ctx context.Context) error) error {
	defer dl.stop()
	id, ok := c.track(dl)
	if !ok {
		return fmt.Errorf("%s on %q: %w", what, c.name, tools.ErrSessionClosed)
	}
	if err := c.limit.acquire(reqCtx, c.done); err != nil {
		return c.queueError(ctx, what, c.untrack(id), err)
	}
	if err := reqCtx.Err(); err != nil || c.isClosing() {
		// The slot came free as Close (or the deadline) ended this
		// request: a freed slot and the end race, and a request Close
		// released must not reach the server.
		c.limit.release()
		return c.queueError(ctx, what, c.untrack(id), err)
	}
	err := f(reqCtx)
	c.limit.release()
	closing := c.untrack(id)
	switch tooLarge := c.tap.frameTooLarge(); {
	case err == nil:
		return nil
	case ctx.Err() != nil: // the caller gave up; say so in its own terms
		return fmt.Errorf("%s on %q: %w", what, c.name, ctx.Err())
	case tooLarge != nil: // whichever way the end reached this request
		return fmt.Errorf("%s on %q: %w", what, c.name, tooLarge)
	case closing, errors.Is(err, mcp.ErrConnectionClosed):
		if cause := c.cause.Load(); cause != nil {
			// A request in flight when the session was ended from here (an
			// answer over its bound elsewhere, a refused refresh) says why.
			return scrubError(c.scrub, fmt.Errorf("%s on %q: %w: %w", what, c.name, tools.ErrSessionClosed, *cause))
		}
		return fmt.Errorf("%s on %q: %w", what, c.name, tools.ErrSessionClosed)
	case reqCtx.Err() != nil:
		return c.timeoutError(what, context.Cause(reqCtx), dl)
	case c.cause.Load() != nil:
		// Ended from here (an answer over its bound, a refused refresh):
		// that is the reason, which the SDK's text may have flattened.
		return scrubError(c.scrub, fmt.Errorf("%s on %q: %w", what, c.name, *c.cause.Load()))
	}
	return scrubError(c.scrub, fmt.Errorf("%s on %q: %w", what, c.name, err))
}

// queueError is do's error for a request that gave up waiting for a slot
// (err from acquire); the server never saw it. closing reports whether
// Close began: Close releases the waiting requests by cancelling them.
func (c *Conn) queueError(ctx context.Context, what op, closing bool, err error) error {
	switch {
	case ctx.Err() != nil: // the caller gave up; say so in its own terms
		return fmt.Errorf("%s on %q: %w", what, c.name, ctx.Err())
	case closing, errors.Is(err, errGone):
		return fmt.Errorf("%s on %q: %w", what, c.name, tools.ErrSessionClosed)
	}
	return fmt.Errorf("%s on %q: %w after %s (timeout_seconds) waiting for a free slot (max_concurrent_calls=%d)",
		what, c.name, tools.ErrTimeout, c.timeout, c.limit.limit())
}

// timeoutError is run's error for a request its deadline ended (cause
// from its context): it names the limit that ended it.
func (c *Conn) timeoutError(what op, cause error, dl *requestDeadline) error {
	switch {
	case errors.Is(cause, errMaxCall):
		return fmt.Errorf("%s on %q: %w: still running after %s (max_call_seconds), though its progress reports kept restarting timeout_seconds",
			what, c.name, tools.ErrTimeout, c.maxCall)
	case dl.hadProgress():
		return fmt.Errorf("%s on %q: %w: no answer and no progress for %s (timeout_seconds) since its last progress report",
			what, c.name, tools.ErrTimeout, c.timeout)
	}
	return fmt.Errorf("%s on %q: %w after %s (timeout_seconds)", what, c.name, tools.ErrTimeout, c.timeout)
}

// track registers a running request; false once Close began.
func (c *Conn) track(dl *requestDeadline) (uint64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing {
		return 0, false
	}
	c.nextCall++
	c.inflight[c.nextCall] = dl
	return c.nextCall, true
}

// isClosing reports whether Close began.
func (c *Conn) isClosing() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closing
}

// untrack removes a finished request and reports whether Close began.
func (c *Conn) untrack(id uint64) (closing bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.inflight, id)
	return c.closing
}
