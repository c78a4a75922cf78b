package exampleserver

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// callCounter counts answered tool calls against a limit.
type callCounter struct {
	limit int
	// reached is closed once the response to the limit-th call is written.
	reached chan struct{}

	mu    sync.Mutex
	calls int // handled calls, counted before their responses are written
}

// newCallCounter returns a counter for a positive limit.
func newCallCounter(limit int) *callCounter {
	return &callCounter{limit: limit, reached: make(chan struct{})}
}

// middleware counts tools/call requests.
func (c *callCounter) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if _, ok := req.(*mcp.CallToolRequest); ok && c.count() {
			// The SDK cancels a request's context right after writing its
			// response, so signalling then makes "answered" literal: closing
			// the session any earlier would drop the response.
			context.AfterFunc(ctx, func() { close(c.reached) })
		}
		return res, err
	}
}

// count records one call and reports whether it is the limit-th. Counting
// before the response is written means that once the session has ended,
// limitReached is final even if the client left before reached closed.
func (c *callCounter) count() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	return c.calls == c.limit
}

// limitReached reports whether the limit-th call has been handled.
func (c *callCounter) limitReached() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls >= c.limit
}
