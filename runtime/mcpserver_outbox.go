package runtime

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sessionQueue is how many notifications wait for one client session; one
// more is dropped for that session.
const sessionQueue = 64

// outboxes send notifications to each client session on a goroutine of
// the session's own, so that a client that stopped reading (each send to
// it waits out its timeout) delays only itself. A session's goroutine
// runs while its queue holds something and ends when it is empty: none
// is left once a session ended (its queue drains in at most sessionQueue
// timeouts) or the gateway stopped (what is queued then is dropped).
type outboxes struct {
	mu      sync.Mutex
	by      map[*mcp.ServerSession]chan func(context.Context)
	senders sync.WaitGroup // the drain goroutines (wait)
}

func newOutboxes() *outboxes {
	return &outboxes{by: map[*mcp.ServerSession]chan func(context.Context){}}
}

// post queues send for ss, starting its sender if none runs; it reports
// false when ss's queue is full (send is dropped). send gets a context
// that ends with ctx or after logSendTimeout.
func (o *outboxes) post(ctx context.Context, ss *mcp.ServerSession, send func(context.Context)) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	q, running := o.by[ss]
	if !running {
		q = make(chan func(context.Context), sessionQueue)
		o.by[ss] = q
		o.senders.Go(func() { o.drain(ctx, ss, q) })
	}
	select {
	case q <- send:
		return true
	default:
		return false
	}
}

// drain sends what ss's queue holds, one at a time, and ends when it is
// empty.
func (o *outboxes) drain(ctx context.Context, ss *mcp.ServerSession, q chan func(context.Context)) {
	for {
		o.mu.Lock()
		var send func(context.Context)
		select {
		case send = <-q:
		default:
			delete(o.by, ss)
			o.mu.Unlock()
			return
		}
		o.mu.Unlock()
		if ctx.Err() != nil {
			continue // the gateway stopped: drop the rest
		}
		sctx, cancel := context.WithTimeout(ctx, logSendTimeout)
		send(sctx)
		cancel()
	}
}

// wait returns once every sender ended; the caller's ctx ended and
// nothing posts any more (mirror.run, after its helpers).
func (o *outboxes) wait() { o.senders.Wait() }
