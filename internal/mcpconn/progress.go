package mcpconn

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/internal/redact"
	"github.com/openprogram/mcpvisor/tools"
)

// progressRouter maps the progress token of each tool call of one
// connection to the call: a report restarts the call's timeout and
// reaches its host callback, if any. Tokens are strings ("mcpvisor-N",
// unique per connection): a number would come back as a float64.
//
// The map holds the calls in flight (bounded by the caller, and by
// max_concurrent_calls) and, for a quarter of a second after it ended, a
// call whose host asked for progress. A report whose token is not in the
// map — a call that ended, a token the server made up, a number — does
// nothing but a debug log line.
type progressRouter struct {
	next  atomic.Uint64
	mu    sync.Mutex
	calls map[string]progressEntry
}

// progressEntry is one call's: its deadline (nil once the call ended) and
// its host's callback (nil if none).
type progressEntry struct {
	deadline *requestDeadline
	report   func(tools.Progress)
}

// register gives a call its token. done must be called when the call
// ends: from then on a report no longer touches its deadline.
func (r *progressRouter) register(report func(tools.Progress), dl *requestDeadline) (token string, done func()) {
	token = "mcpvisor-" + strconv.FormatUint(r.next.Add(1), 10)
	r.mu.Lock()
	if r.calls == nil {
		r.calls = map[string]progressEntry{}
	}
	r.calls[token] = progressEntry{deadline: dl, report: report}
	r.mu.Unlock()
	return token, func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		if report == nil {
			delete(r.calls, token)
			return
		}
		// The SDK hands a call its result at once but queues
		// notifications for a handler goroutine, so the server's last
		// reports can arrive just after the result: the host's callback
		// keeps listening for them a moment.
		r.calls[token] = progressEntry{report: report}
		time.AfterFunc(progressGrace, func() {
			r.mu.Lock()
			delete(r.calls, token)
			r.mu.Unlock()
		})
	}
}

// progressGrace is how long a call's progress callback still receives
// reports after the call returned.
const progressGrace = 250 * time.Millisecond

// deliver handles one progress notification. It runs on the connection's
// read loop: it only resets a timer and calls the host's callback (which
// must return quickly, see tools.WithProgress).
func (r *progressRouter) deliver(ctx context.Context, logger *slog.Logger, scrub *redact.Scrubber, p *mcp.ProgressNotificationParams) {
	if p == nil {
		return
	}
	p.Message = scrub.String(p.Message)
	logger.Debug("progress", "progress", p.Progress, "total", p.Total, "message", p.Message)
	token, ok := p.ProgressToken.(string)
	if !ok {
		return
	}
	r.mu.Lock()
	e, ok := r.calls[token]
	r.mu.Unlock()
	if !ok {
		return
	}
	if e.deadline != nil {
		e.deadline.progress()
	}
	if e.report != nil {
		e.report(tools.Progress{Progress: p.Progress, Total: p.Total, Message: p.Message})
	}
}

// size is how many calls the router holds (tests).
func (r *progressRouter) size() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.calls)
}
