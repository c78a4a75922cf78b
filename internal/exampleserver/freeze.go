package exampleserver

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The keepalive tools (Options.FreezeTool) let a test see a client's
// liveness probes and make the server hang while its process keeps
// running, as a deadlocked server does.

// FreezeToolName is the tool that makes the server stop answering.
const FreezeToolName = "freeze"

// ProbesToolName is the tool that reports the probes the server received.
const ProbesToolName = "probes"

// probeCounts are what the probes tool answers (as JSON): the ping and
// server/discover requests received so far. A 2026-07-28 session starts
// with one server/discover of its own.
type probeCounts struct {
	Ping     int64 `json:"ping"`
	Discover int64 `json:"discover"`
}

// freezeArgs are the arguments of the freeze tool.
type freezeArgs struct {
	Ms int `json:"ms,omitempty" jsonschema:"how long to stay frozen, in milliseconds (default: for good)"`
}

// freezer counts the probes and, once frozen, holds every request.
type freezer struct {
	ping     atomic.Int64
	discover atomic.Int64

	mu     sync.Mutex
	frozen chan struct{} // nil: not frozen; closed when the freeze ends
}

// freeze holds every request from now on, for d (d ≤ 0: for good). A
// freeze that ends lets the held requests go on: a server in a test's
// own process must not keep goroutines blocked after it.
func (f *freezer) freeze(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.frozen != nil {
		return
	}
	thaw := make(chan struct{})
	f.frozen = thaw
	if d > 0 {
		time.AfterFunc(d, func() {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.frozen = nil
			close(thaw)
		})
	}
}

// hold returns the channel a request waits on, or nil if not frozen.
func (f *freezer) hold() chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.frozen
}

// addFreezeTools registers the freeze and probes tools and the
// middleware that counts probes and holds requests once frozen.
func addFreezeTools(srv *mcp.Server) {
	f := &freezer{}
	srv.AddReceivingMiddleware(f.middleware)
	mcp.AddTool(srv, &mcp.Tool{Name: FreezeToolName, Description: "Answers, then answers no request for ms milliseconds, or never again without ms (the process keeps running)."},
		func(_ context.Context, _ *mcp.CallToolRequest, in freezeArgs) (*mcp.CallToolResult, any, error) {
			f.freeze(time.Duration(in.Ms) * time.Millisecond)
			return textResult("frozen"), nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: ProbesToolName, Description: "Reports how many ping and server/discover requests the server received, as JSON."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			b, err := json.Marshal(probeCounts{Ping: f.ping.Load(), Discover: f.discover.Load()})
			if err != nil {
				return nil, nil, err
			}
			return textResult(string(b)), nil, nil
		})
}

// middleware counts the probes and, while frozen, holds each request until
// the client gives up on it (its context ends with a cancellation or the
// session) or the freeze ends, so no answer arrives in time.
// Notifications still pass: a cancelled request's handler must be able to
// end, and the process to exit when its input closes.
func (f *freezer) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "ping":
			f.ping.Add(1)
		case "server/discover":
			f.discover.Add(1)
		}
		if thaw := f.hold(); thaw != nil && !isNotification(method) {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-thaw:
			}
		}
		return next(ctx, method, req)
	}
}

func isNotification(method string) bool { return strings.HasPrefix(method, "notifications/") }
