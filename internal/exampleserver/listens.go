package exampleserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// listens are the server's open subscriptions/listen streams for
// resources (protocol 2026-07-28), which the end_subscriptions tool ends
// on demand, as a server that restarts a stream or a proxy that drops it
// would; after {"refuse": true} every new one is refused, as a server
// that no longer serves a resource would.
type listens struct {
	mu     sync.Mutex
	open   map[int]context.CancelFunc
	next   int
	opened int // resource streams asked for, refused ones included
	refuse bool
}

// errRefused is the refusal of a stream after end_subscriptions refuse.
var errRefused = errors.New("subscriptions are refused (end_subscriptions was called with refuse)")

// middleware runs each resource listen under a context end_subscriptions
// can end: the SDK's listen handler parks until its context ends, then
// answers the request, which ends the stream.
func (l *listens) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		p, ok := req.GetParams().(*mcp.SubscriptionsListenParams)
		if method != "subscriptions/listen" || !ok || p.Notifications == nil || len(p.Notifications.ResourceSubscriptions) == 0 {
			return next(ctx, method, req)
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		l.mu.Lock()
		l.opened++
		if l.refuse {
			l.mu.Unlock()
			return nil, errRefused
		}
		if l.open == nil {
			l.open = map[int]context.CancelFunc{}
		}
		id := l.next
		l.next++
		l.open[id] = cancel
		l.mu.Unlock()
		defer func() {
			l.mu.Lock()
			delete(l.open, id)
			l.mu.Unlock()
		}()
		return next(ctx, method, req)
	}
}

// endSchema is the input schema of the end_subscriptions tool.
const endSchema = `{"type":"object","properties":{"refuse":{"type":"boolean","description":"refuse every subscription stream asked for from now on"},"keep":{"type":"boolean","description":"end nothing, only count"}},"additionalProperties":false}`

// endArgs are the arguments of the end_subscriptions tool.
type endArgs struct {
	Refuse bool `json:"refuse"`
	Keep   bool `json:"keep"`
}

// addEndSubscriptionsTool registers end_subscriptions, which ends the
// open resource subscription streams (unless keep) and answers
// "ended N, open M, opened K": how many it ended, how many are open
// after it, and how many were asked for in all.
func addEndSubscriptionsTool(srv *mcp.Server, l *listens) {
	srv.AddReceivingMiddleware(l.middleware)
	mcp.AddTool(srv, &mcp.Tool{
		Name:        "end_subscriptions",
		Description: "Ends the server's open resource subscription streams (protocol 2026-07-28) and says how many it ended, are open and were opened; refuse: refuse new ones; keep: only count.",
		InputSchema: json.RawMessage(endSchema),
	}, func(_ context.Context, _ *mcp.CallToolRequest, in endArgs) (*mcp.CallToolResult, any, error) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.refuse = l.refuse || in.Refuse
		ended := 0
		if !in.Keep {
			for id, cancel := range l.open {
				cancel()
				delete(l.open, id)
				ended++
			}
		}
		return textResult(fmt.Sprintf("ended %d, open %d, opened %d", ended, len(l.open), l.opened)), nil, nil
	})
}
