package mcpconn

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/tools"
)

// CallTool calls a tool by its original name on this session, bounded by
// the server's timeout and by Close. Calls run concurrently; with
// max_concurrent_calls set, a call beyond the limit waits for a slot, and
// that wait counts towards the timeout (see limiter.acquire). Cancelling
// ctx returns at once; the server gets notifications/cancelled.
func (c *Conn) CallTool(ctx context.Context, name string, args any) (res *mcp.CallToolResult, err error) {
	err = c.do(ctx, op{verb: "calling", arg: name}, func(callCtx context.Context) error {
		// A fresh params value per call: the SDK writes into it.
		params := &mcp.CallToolParams{Name: name, Arguments: args}
		if c.logs {
			// From protocol 2026-07-28 on, a server takes the log level of
			// what it logs during a request from the request itself.
			params.Meta = mcp.Meta{mcp.MetaKeyLogLevel: serverLogLevel}
		}
		if f := tools.ProgressFrom(ctx); f != nil && c.progress != nil {
			token, done := c.progress.register(f)
			defer done()
			params.SetProgressToken(token)
		}
		res, err = c.cs.CallTool(callCtx, params)
		return err
	})
	return res, err
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
	reqCtx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	id, ok := c.track(cancel)
	if !ok {
		return fmt.Errorf("%s on %q: %w", what, c.name, tools.ErrSessionClosed)
	}
	if err := c.limit.acquire(reqCtx, c.done); err != nil {
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
		return fmt.Errorf("%s on %q: %w after %s (timeout_seconds)", what, c.name, tools.ErrTimeout, c.timeout)
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

// track registers a running request; false once Close began.
func (c *Conn) track(cancel context.CancelFunc) (uint64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing {
		return 0, false
	}
	c.nextCall++
	c.inflight[c.nextCall] = cancel
	return c.nextCall, true
}

// untrack removes a finished request and reports whether Close began.
func (c *Conn) untrack(id uint64) (closing bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.inflight, id)
	return c.closing
}
