package runtime

import (
	"context"
	"net/http"
	"time"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/internal/mcpconn"
)

// Per-route deadlines. Handler sets a write deadline on every answer
// through http.ResponseController, sized to what the route may rightly
// wait for, and ends the request's context there (an answer that can no
// longer be written is not worth waiting for):
//
//   - routeTimeout (30 s) for reads and quick writes;
//   - a tool call: its server's max_call_seconds plus routeMargin, as a
//     call whose progress keeps restarting its timeout_seconds may run
//     that long;
//   - a prompt get: its server's timeout_seconds plus routeMargin, as the
//     server may take all of it;
//   - a change that restarts a server (PATCH, restart, DELETE, reload):
//     the longest timeout_seconds there can be (config.MaxTimeoutSeconds,
//     as a PATCH may raise it) plus routeMargin; a DELETE also waits for
//     the server's processes, so it gets the stop sequence's bound
//     (mcpconn.StopBound of StopGrace) on top;
//   - a completion or a resource subscription, whose server is named in
//     the body (read after the deadline is set): the longest
//     timeout_seconds of the configured servers plus routeMargin;
//   - a catalog apply: applyBudget (165 s, catalog_apply.go), enough for
//     MaxApplyEntries entries and the answer wait of the last one;
//   - the event stream (http_events.go) is long-lived: it sets a deadline
//     on each frame it writes instead, and has no route deadline.
//
// The server's ReadTimeout still bounds the request and its body (net/http
// clears the connection's read deadline once the body is read, so it does
// not cut off a route that rightly runs longer).
//
// A ResponseWriter that cannot take deadlines (a host's own wrapper
// without Unwrap, httptest.ResponseRecorder) is served without them.
const (
	routeTimeout = 30 * time.Second
	routeMargin  = 30 * time.Second
)

// withDeadline runs h with the deadline budget(req) from now.
func withDeadline(budget func(*http.Request) time.Duration, h handlerFunc) handlerFunc {
	return func(w http.ResponseWriter, req *http.Request) error {
		deadline := time.Now().Add(budget(req))
		// Only a writer without deadlines fails here (ErrNotSupported):
		// it is served without them.
		_ = http.NewResponseController(w).SetWriteDeadline(deadline)
		ctx, cancel := context.WithDeadline(req.Context(), deadline)
		defer cancel()
		return h(w, req.WithContext(ctx))
	}
}

// removing is the budget of a DELETE: it waits for the processes too.
func (r *Runtime) removing(req *http.Request) time.Duration {
	return restarting(req) + mcpconn.StopBound(r.opts.StopGrace)
}

// ordinary is the budget of reads and quick writes.
func ordinary(*http.Request) time.Duration { return routeTimeout }

// restarting is the budget of a change that may restart a server.
func restarting(*http.Request) time.Duration {
	return config.MaxTimeoutSeconds*time.Second + routeMargin
}

// toolBudget is the budget of a tool call: its server's max_call_seconds
// plus the margin (an unknown tool answers at once).
func (r *Runtime) toolBudget(req *http.Request) time.Duration {
	if t, ok := r.registry.Get(req.PathValue("name")); ok {
		if srv, ok := r.config.Load().Get(t.Server); ok {
			return max(srv.MaxCallDuration()+routeMargin, routeTimeout)
		}
	}
	return routeTimeout
}

// promptBudget is the budget of a prompt get, as toolBudget.
func (r *Runtime) promptBudget(req *http.Request) time.Duration {
	if p, ok := r.prompts.Get(req.PathValue("name")); ok {
		return r.serverBudget(p.Server)
	}
	return routeTimeout
}

func (r *Runtime) serverBudget(name string) time.Duration {
	if srv, ok := r.config.Load().Get(name); ok {
		return max(srv.Timeout()+routeMargin, routeTimeout)
	}
	return routeTimeout
}

// namedInBodyBudget is the budget of a route whose server is named in the
// body (a completion, a subscription, a resource read), which is read after the deadline
// is set: the longest timeout_seconds of the configured servers plus the
// margin, as the server's own timeout bounds the request itself.
func (r *Runtime) namedInBodyBudget(*http.Request) time.Duration {
	longest := routeTimeout
	for _, srv := range r.config.Load().Servers {
		longest = max(longest, srv.Timeout()+routeMargin)
	}
	return longest
}
