package exampleserver

import (
	"context"
	"encoding/json"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// callCounter counts answered tool calls against a limit.
type callCounter struct {
	limit int
	// reached is closed once the response to the limit-th call is written.
	reached chan struct{}

	mu    sync.Mutex
	calls int  // handled calls, counted before their responses are written
	armed bool // the limit-th call was handled; its response is the next write
	fired bool
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
			c.arm()
		}
		return res, err
	}
}

// arm makes the next write to the client (the response of the limit-th
// call, written after the handler returned) close reached. Signalling on
// the write itself makes "answered" literal: the request's context can end
// before its response is written, and exiting then would drop it.
func (c *callCounter) arm() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.armed = true
}

// wrote is called after each write to the client, with what was written.
// Only a tool call's answer fires: the runtime's other requests (a prompt
// listing at ready, say) may be answered between the limit-th call being
// handled and its answer being written.
func (c *callCounter) wrote(p []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.armed && !c.fired && isToolAnswer(p) {
		c.fired = true
		close(c.reached)
	}
}

// signalWriter tells the counter about every completed write.
type signalWriter struct {
	io.WriteCloser
	counter *callCounter
}

func (w signalWriter) Write(p []byte) (int, error) {
	n, err := w.WriteCloser.Write(p)
	w.counter.wrote(p)
	return n, err
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

// isToolAnswer reports whether frame is the answer to a tools/call: a
// JSON-RPC response whose result has content.
func isToolAnswer(frame []byte) bool {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Result struct {
			Content json.RawMessage `json:"content"`
		} `json:"result"`
	}
	return json.Unmarshal(frame, &m) == nil && m.ID != nil && m.Result.Content != nil
}
