package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/time/rate"

	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/loggate"
)

// ServerRequestLimits bound the requests servers send the host that spend
// the user's model budget or attention: sampling/createMessage (Options.
// Sample) and elicitation/create (Options.Elicit). Each server has its own
// limits for each of the two kinds, so one server's flood of sampling
// neither slows another server nor its own elicitation. A request beyond a
// limit is answered at once with a JSON-RPC error naming the limit, the
// host's callback is not called, the refusal is logged (Warn, the server's
// name and the limit, never the request; rate-limited per server like its
// stderr: a burst of 100 records, then one a second, with a count of the
// records suppressed) and counted in the server's status
// (requests_refused, every refusal). Its events.RequestRefused are
// rate-limited the same way (a subscriber gets the burst, then one a
// second saying how many were held back; refusals held back when the
// flood stops are said a second later by a RequestRefused without a
// method) and kept out of the events' history: a resumed subscriber reads
// the count from Status. A removed server's requests are refused, and not
// counted, until its processes are gone.
//
// The zero value means the defaults; a negative field turns its limit off.
// The limits apply only to a callback the host set, or to a gateway
// client asked instead (MCPServer; with roots/list as a kind of its own):
// without either, requests are answered at once (an error, a decline)
// and cost nothing.
type ServerRequestLimits struct {
	// MaxConcurrent is how many requests of one kind from one server the
	// host's callback handles at once. Default 2.
	MaxConcurrent int
	// MaxBytes bounds the size of a request's params as JSON (messages,
	// images, system prompt, the tools offered with their schemas; message
	// and schema). Default 256 KiB.
	MaxBytes int
	// MaxTools bounds how many tools one sampling request may offer the
	// model. Default 128 (what model APIs commonly take).
	MaxTools int
	// PerMinute is the sustained rate of one kind of request from one
	// server, refilling a bucket of Burst requests (at least 1). Default 10
	// per minute with a burst of 3.
	PerMinute int
	Burst     int

	// now is the rate limits' clock; tests set it. Default time.Now.
	now func() time.Time
}

// The defaults of ServerRequestLimits, as its doc comment says.
const (
	defaultRequestConcurrency = 2
	defaultRequestBytes       = 256 << 10
	defaultRequestTools       = 128
	defaultRequestsPerMinute  = 10
	defaultRequestBurst       = 3
)

// JSON-RPC error codes of a refused request: its params are too large
// (invalid params), or the server asks too often or too much at once (an
// implementation-defined code).
const (
	codeRequestTooLarge = jsonrpc.CodeInvalidParams
	codeRequestRefused  = -32000
)

func (l ServerRequestLimits) withDefaults() ServerRequestLimits {
	orDefault := func(v *int, def int) {
		if *v == 0 {
			*v = def
		}
	}
	orDefault(&l.MaxConcurrent, defaultRequestConcurrency)
	orDefault(&l.MaxBytes, defaultRequestBytes)
	orDefault(&l.MaxTools, defaultRequestTools)
	orDefault(&l.PerMinute, defaultRequestsPerMinute)
	orDefault(&l.Burst, defaultRequestBurst)
	l.Burst = max(l.Burst, 1)
	if l.now == nil {
		l.now = time.Now
	}
	return l
}

// requestGate applies ServerRequestLimits. One per Runtime; it keeps one
// counter and bucket per server and kind, and the rate limit of each
// server's refusal records, from a server's first request until the server
// is removed (forget), so that it holds only live servers however many
// names come and go.
type requestGate struct {
	limits ServerRequestLimits
	events *events.Bus
	clock  clockwork.Clock // of the timer that says held-back refusals

	mu      sync.Mutex
	servers map[string]*serverRequests
	// removed holds the names of servers removed whose processes may still
	// ask (forget until freed): their requests are refused uncounted, so
	// nothing of them follows their ServerRemoved or reaches a server
	// added again under the name.
	removed map[string]bool
	closed  bool // Shutdown: no timer is started any more
}

// serverRequests is one server's state.
type serverRequests struct {
	kinds map[string]*serverGate // by method
	// shown rate-limits the server's RequestRefused events (the log
	// gate's policy); held counts those tallied but not emitted since the
	// last one emitted. Both under requestGate.mu.
	shown *rate.Limiter
	held  int
	// flush says the held-back count if no refusal is emitted before the
	// limiter's next slot: the stream must not owe a count while the
	// server lives. Under requestGate.mu.
	flush clockwork.Timer
}

// stopFlush stops sr's flush timer, if any; under requestGate.mu.
func (sr *serverRequests) stopFlush() {
	if sr.flush != nil {
		sr.flush.Stop()
		sr.flush = nil
	}
}

// serverGate is one server's state for one kind of request.
type serverGate struct {
	running int // under requestGate.mu
	bucket  *rate.Limiter
}

// newRequestGate returns the gate of limits l, emitting on bus; clock is
// the runtime's (the rate limits' too, unless l sets its own now).
func newRequestGate(l ServerRequestLimits, bus *events.Bus, clock clockwork.Clock) *requestGate {
	if l.now == nil {
		l.now = clock.Now
	}
	return &requestGate{limits: l.withDefaults(), events: bus, clock: clock,
		servers: map[string]*serverRequests{}, removed: map[string]bool{}}
}

// server returns a server's state, made on its first request; under g.mu.
func (g *requestGate) server(name string) *serverRequests {
	sr := g.servers[name]
	if sr == nil {
		sr = &serverRequests{kinds: map[string]*serverGate{}}
		g.servers[name] = sr
	}
	return sr
}

// forget drops a removed server's state (the manager calls it just
// before the server's ServerRemoved): its held-back count is said now,
// and its requests are refused uncounted until freed. A server added
// later under the same name starts afresh.
func (g *requestGate) forget(name string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if sr := g.servers[name]; sr != nil {
		sr.stopFlush()
		if sr.held > 0 {
			// The last word: the refusals held back, for the log's count.
			g.events.Emit(events.RequestRefused{Header: events.Header{Server: name}, Suppressed: sr.held})
		}
	}
	delete(g.servers, name)
	g.removed[name] = true
}

// freed is called once a removed server's processes are gone: nothing of
// it asks any more, and the name is a new server's.
func (g *requestGate) freed(name string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.removed, name)
}

// close stops every flush timer (Shutdown); the counts they would say are
// in Status.
func (g *requestGate) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed = true
	for _, sr := range g.servers {
		sr.stopFlush()
	}
}

// flushHeld is the flush timer of sr: the refusals held back since the
// last one emitted, as a RequestRefused without a method (which the board
// does not count again).
func (g *requestGate) flushHeld(name string, sr *serverRequests) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.servers[name] != sr || sr.flush == nil {
		return // forgotten, or a refusal emitted meanwhile said the count
	}
	sr.flush = nil
	if sr.held > 0 {
		g.events.Emit(events.RequestRefused{Header: events.Header{Server: name}, Suppressed: sr.held})
		sr.held = 0
	}
}

// guard wraps a host callback (nil stays nil) with the limits for method;
// params gives a request's params, whose JSON size is checked.
func guard[Req, Res any](g *requestGate, method string, params func(Req) any,
	next func(context.Context, string, Req) (Res, error)) func(context.Context, string, Req) (Res, error) {
	if next == nil {
		return nil
	}
	return func(ctx context.Context, server string, req Req) (Res, error) {
		release, err := g.admit(server, method, params(req))
		if err != nil {
			var zero Res
			return zero, err
		}
		defer release()
		return next(ctx, server, req)
	}
}

// admit lets a request through to the host, or refuses it with the error
// the server gets. The checks are in order of cost: how many run (no
// change), the tools offered, the size, then the rate (which spends a
// token only for a request that is let through).
func (g *requestGate) admit(server, method string, params any) (release func(), err error) {
	l := g.limits
	g.mu.Lock()
	if g.removed[server] {
		g.mu.Unlock()
		return nil, &jsonrpc.Error{Code: codeRequestRefused, Message: "the MCP host refused the request: the server was removed"}
	}
	sr := g.server(server)
	sg := sr.kinds[method]
	if sg == nil {
		sg = &serverGate{bucket: rate.NewLimiter(rate.Limit(float64(l.PerMinute)/60), l.Burst)}
		if l.PerMinute < 0 {
			sg.bucket = rate.NewLimiter(rate.Inf, 0)
		}
		sr.kinds[method] = sg
	}
	if l.MaxConcurrent > 0 && sg.running >= l.MaxConcurrent {
		g.mu.Unlock()
		return nil, g.refuse(sr, server, method, "max_concurrent", codeRequestRefused,
			fmt.Sprintf("more than %d at once from this server", l.MaxConcurrent))
	}
	sg.running++
	g.mu.Unlock()
	release = sync.OnceFunc(func() {
		g.mu.Lock()
		sg.running--
		g.mu.Unlock()
	})
	if p, ok := params.(*mcp.CreateMessageWithToolsParams); ok && l.MaxTools > 0 && p != nil && len(p.Tools) > l.MaxTools {
		release()
		return nil, g.refuse(sr, server, method, "max_tools", codeRequestTooLarge,
			fmt.Sprintf("it offers %d tools, over the limit of %d", len(p.Tools), l.MaxTools))
	}
	if l.MaxBytes > 0 {
		raw, err := json.Marshal(params)
		if err != nil || len(raw) > l.MaxBytes {
			release()
			return nil, g.refuse(sr, server, method, "max_bytes", codeRequestTooLarge,
				fmt.Sprintf("its params are %d bytes of JSON, over the limit of %d", len(raw), l.MaxBytes))
		}
	}
	if !sg.bucket.AllowN(l.now(), 1) {
		release()
		return nil, g.refuse(sr, server, method, "rate", codeRequestRefused,
			fmt.Sprintf("more than %d per minute (burst %d) from this server; try again later", l.PerMinute, l.Burst))
	}
	return release, nil
}

// refusalFlushDelay is how long held-back refusals wait for a refusal
// emitted to say them: the refusal events' limiter's next slot.
const refusalFlushDelay = time.Second / loggate.PerSecond

// refuse is the one place a refusal is reported: a RequestRefused event
// and the error the server gets. A server can be refused as fast as it
// asks, so its events are rate-limited here like its log lines (the
// loggate policy): beyond that a refusal is only tallied, which the board
// counts all the same (requests_refused stays exact), and the next event
// emitted says how many were held back. Subscribers' buffers and the
// log's are not flooded, and the history never holds them (events.Bus).
func (g *requestGate) refuse(sr *serverRequests, server, method, limit string, code int64, why string) error {
	e := events.RequestRefused{Header: events.Header{Server: server}, Method: method, Limit: limit}
	g.mu.Lock()
	if sr.shown == nil {
		sr.shown = rate.NewLimiter(loggate.PerSecond, loggate.Burst)
	}
	shown := sr.shown.AllowN(g.limits.now(), 1)
	if shown {
		e.Suppressed, sr.held = sr.held, 0
		sr.stopFlush()
	} else {
		sr.held++
		if sr.flush == nil && !g.closed {
			// Said at the limiter's next slot unless a refusal emitted
			// before then says it.
			sr.flush = g.clock.AfterFunc(refusalFlushDelay, func() { g.flushHeld(server, sr) })
		}
	}
	// Emitted under the lock, so that a held-back count is said by the
	// next event emitted and never overtaken by it.
	if shown {
		g.events.Emit(e)
	} else {
		g.events.Tally(e)
	}
	g.mu.Unlock()
	return &jsonrpc.Error{Code: code, Message: fmt.Sprintf("the MCP host refused %s (limit %s): %s", method, limit, why)}
}
