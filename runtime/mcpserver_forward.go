package runtime

import (
	"context"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/internal/mcpconn"
)

// The gateway's client features (X2): sampling, elicitation and roots that
// an upstream server asks go to the gateway client that caused them, when
// it declared the capability, else to the runtime's own Options handlers.
//
// Routing. The go-sdk gives an upstream client's handlers the context of
// the request they answer. On protocol 2026-07-28 a server asks through
// its tool result (multi round-trip: InputRequests), and the SDK's client
// fulfils it inside CallTool, under the call's context: the gateway call
// that caused it rides in that context (gatewayCallKey) and is the answer.
// Before 2026-07-28 a server sends requests of its own, which the SDK
// handles under the connection's context, with nothing tying them to a
// call (stdio has no request relation; on Streamable HTTP the SDK's client
// transport does not say which POST stream brought a request). Then the
// request goes by server: when every gateway call in flight on the asking
// server is one session's, that session, if it can answer (through its
// newest call, the likeliest to be asking); calls of several sessions in
// flight there: nobody, since the request may be any one's and a question
// built of one client's data must never reach another client (nor its
// answer go into another's call). With no call in flight on the server (a
// roots/list right after initialize), the only connected gateway session,
// when there is exactly one (a stdio gateway); else nobody. Nobody able:
// the Options handler.
//
// A session can answer when it declared the capability (sampling, with
// tools when the request offers tools; elicitation in the request's mode;
// roots: any roots capability, listChanged or not; the go-sdk decodes a
// client's initialize capabilities into RootsV2, which is set for a bare
// "roots": {}, and Roots, which mirrors it). On
// a protocol before 2026-07-28 the gateway asks it with a request of its
// own; from 2026-07-28 on (where a server may ask its client only through
// a tool result) the call is a parked one (see parkedCall) and the
// question goes back to the client in the gateway's input-required
// answer to the call. A session on 2026-07-28 with no call in flight
// cannot be asked.

// forwarder keeps what routing needs: the gateway calls in flight by
// upstream server, the gateway servers alive (for their sessions), and
// each upstream session's way to announce a roots change. One per
// Runtime.
type forwarder struct {
	mu      sync.Mutex
	seq     uint64
	calls   map[string]map[*gatewayCall]struct{}     // by upstream server name
	servers map[*mcp.Server]func(server string) bool // each one's serverVisible
	watches map[string]func()                        // by upstream server name
	conn    func(server string) *mcpconn.Conn        // the server's current connection (nil: none), whose scrubber cleans what it asks

	rootsDelay   time.Duration       // how long roots changes gather (rootsDebounce)
	rootsPending map[string]struct{} // servers to tell when rootsTimer fires
	rootsTimer   *time.Timer         // set while changes gather
}

// rootsDebounce is how long the roots changes gateway clients announce
// gather before the servers hear of them, once: a client's change often
// comes as two notifications (the runtime's own add and remove of its
// marker), and a client may announce many in a burst.
const rootsDebounce = 100 * time.Millisecond

// gatewayCall is one gateway tool call in flight (or, from route, the
// only session, with no ctx).
type gatewayCall struct {
	ctx     context.Context
	session *mcp.ServerSession
	caps    *mcp.ClientCapabilities // what the client declared; nil: it cannot be asked
	park    *parkedCall             // non-nil: asked through the call's result (2026-07-28)
	seq     uint64                  // order of beginning, for the session's newest call
}

type gatewayCallKey struct{}

func newForwarder(conn func(server string) *mcpconn.Conn) *forwarder {
	return &forwarder{conn: conn, calls: map[string]map[*gatewayCall]struct{}{}, servers: map[*mcp.Server]func(string) bool{}, watches: map[string]func(){},
		rootsDelay: rootsDebounce, rootsPending: map[string]struct{}{}}
}

// begin records a gateway call of session on server (its client declared
// caps; park: the parked call it runs in, if any) and returns its context
// (carrying the call) and the function that ends the record.
func (f *forwarder) begin(ctx context.Context, server string, session *mcp.ServerSession, caps *mcp.ClientCapabilities, park *parkedCall) (context.Context, func()) {
	if session == nil {
		return ctx, func() {}
	}
	c := &gatewayCall{session: session, caps: caps, park: park}
	ctx = context.WithValue(ctx, gatewayCallKey{}, c)
	c.ctx = ctx
	f.mu.Lock()
	f.seq++
	c.seq = f.seq
	set := f.calls[server]
	if set == nil {
		set = map[*gatewayCall]struct{}{}
		f.calls[server] = set
	}
	set[c] = struct{}{}
	f.mu.Unlock()
	return ctx, func() {
		f.mu.Lock()
		// The set stays (no allocation per call) until forget drops it
		// with the server; a call of a server forgotten meanwhile leaves
		// a set nobody reads.
		delete(set, c)
		f.mu.Unlock()
	}
}

// serve and unserve track the gateway servers alive; visible says which
// upstream servers a gateway server's filter shows (mirror.serverVisible):
// a server it hides never reaches its clients through the only-session
// rule.
func (f *forwarder) serve(s *mcp.Server, visible func(server string) bool) {
	f.mu.Lock()
	f.servers[s] = visible
	f.mu.Unlock()
}

func (f *forwarder) unserve(s *mcp.Server) {
	f.mu.Lock()
	delete(f.servers, s)
	f.mu.Unlock()
}

// route picks the gateway call whose client answers a request of server
// (under ctx, the context the SDK handler got) among those able (can, of
// what the client declared): the call in ctx; else, when every call in
// flight on server is one session's, its newest able one; with no call in
// flight there, the only session, as a gatewayCall without ctx. None:
// nil.
func (f *forwarder) route(ctx context.Context, server string, can func(*mcp.ClientCapabilities) bool) *gatewayCall {
	able := func(c *gatewayCall) bool { return c.caps != nil && can(c.caps) }
	if c, ok := ctx.Value(gatewayCallKey{}).(*gatewayCall); ok {
		if able(c) {
			return c
		}
		return nil
	}
	f.mu.Lock()
	var best, some *gatewayCall
	for c := range f.calls[server] {
		if some != nil && c.session != some.session {
			// Calls of several sessions: the request may be any one's,
			// and one client's question (built of its data) must never
			// reach another, nor its answer go into another's call.
			f.mu.Unlock()
			return nil
		}
		some = c
		if able(c) && (best == nil || c.seq > best.seq) {
			best = c
		}
	}
	inFlight := some != nil
	servers := make([]*mcp.Server, 0, len(f.servers))
	for s, visible := range f.servers {
		if visible(server) {
			servers = append(servers, s)
		}
	}
	f.mu.Unlock()
	if best != nil {
		return best
	}
	if inFlight {
		return nil // the callers in flight cannot answer: none other asked
	}
	var only *mcp.ServerSession
	for _, s := range servers {
		for ss := range s.Sessions() {
			if only != nil {
				return nil
			}
			only = ss
		}
	}
	if only == nil {
		return nil
	}
	c := &gatewayCall{session: only, caps: clientCaps(only)}
	if !able(c) {
		return nil
	}
	return c
}

// watchRoots keeps the newest session's roots notifier of server
// (Deps.WatchRoots); forget drops it, and the server's set of calls, once
// the server is removed (Deps.Gone).
func (f *forwarder) watchRoots(server string, notify func()) {
	f.mu.Lock()
	f.watches[server] = notify
	f.mu.Unlock()
}

func (f *forwarder) forget(server string) {
	f.mu.Lock()
	delete(f.watches, server)
	delete(f.calls, server)
	f.mu.Unlock()
}

// rootsChanged is gateway session ss saying its roots changed (or that
// they are there: a roots-capable session that just initialized). The
// servers whose roots/list would now be routed to ss are told so (on a
// protocol that has the notification), once per rootsDelay however many
// changes came meanwhile; a server whose roots come from another session
// or from Options.Roots has nothing new to hear.
func (f *forwarder) rootsChanged(ss *mcp.ServerSession) {
	f.mu.Lock()
	names := make([]string, 0, len(f.watches))
	for name := range f.watches {
		names = append(names, name)
	}
	f.mu.Unlock()
	var routed []string
	for _, name := range names {
		if call := f.route(context.Background(), name, rootsDeclared); call != nil && call.session == ss {
			routed = append(routed, name)
		}
	}
	if len(routed) == 0 {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, name := range routed {
		f.rootsPending[name] = struct{}{}
	}
	if f.rootsTimer == nil {
		f.rootsTimer = time.AfterFunc(f.rootsDelay, f.flushRoots)
	}
}

// flushRoots tells the servers rootsChanged gathered.
func (f *forwarder) flushRoots() {
	f.mu.Lock()
	f.rootsTimer = nil
	notify := make([]func(), 0, len(f.rootsPending))
	for name := range f.rootsPending {
		if n := f.watches[name]; n != nil {
			notify = append(notify, n)
		}
		delete(f.rootsPending, name)
	}
	f.mu.Unlock()
	for _, n := range notify {
		n()
	}
}

// initialized is a gateway session's notifications/initialized: a
// client that can give its roots on a protocol before newProtocol is
// announced to the servers its roots would go to, so that a server that
// read its roots once before the client connected (server-filesystem
// does) asks again.
func (f *forwarder) initialized(ss *mcp.ServerSession) {
	if caps := clientCaps(ss); caps != nil && rootsDeclared(caps) {
		f.rootsChanged(ss)
	}
}

// newProtocol is the first protocol version on which a server may ask its
// client only through a tool result (multi round-trip).
const newProtocol = "2026-07-28"

// clientCaps is what session declared, if it can be asked directly at all
// (a protocol before newProtocol).
func clientCaps(ss *mcp.ServerSession) *mcp.ClientCapabilities {
	p := ss.InitializeParams()
	if p == nil || p.Capabilities == nil || p.ProtocolVersion >= newProtocol {
		return nil
	}
	return p.Capabilities
}

// onNewProtocol reports whether session negotiated newProtocol or later
// (as the SDK decides whether a result may be input-required).
func onNewProtocol(ss *mcp.ServerSession) bool {
	p := ss.InitializeParams()
	return p != nil && p.ProtocolVersion >= newProtocol
}

// rootsDeclared reports whether caps declare roots, listChanged or not:
// RootsV2 is what the go-sdk decodes from the client's "roots" (set for
// a bare {}); Roots mirrors it, and is all a caller building caps by hand
// may have set.
func rootsDeclared(caps *mcp.ClientCapabilities) bool {
	return caps.Roots.ListChanged || caps.RootsV2 != nil
}

// askable reports whether a client of caps may be asked anything at all
// (sampling, elicitation or roots), so that its call is worth parking.
func askable(caps *mcp.ClientCapabilities) bool {
	return caps != nil && (caps.Sampling != nil || caps.Elicitation != nil || rootsDeclared(caps))
}

// within is the context of asking the gateway client about a request
// the SDK handed the upstream session under ctx, for the gateway call of
// context call (nil: none). It has call's values, so that the go-sdk's
// Streamable HTTP server sends the question on the call's own stream, and
// ends with either: a client's answer to its own call's question is worth
// nothing once the call is over, and the server may give up first.
func within(ctx, call context.Context) (context.Context, context.CancelFunc) {
	if call == nil {
		return context.WithCancel(ctx)
	}
	asking, cancel := context.WithCancelCause(call)
	stop := context.AfterFunc(ctx, func() { cancel(context.Cause(ctx)) })
	return asking, func() { stop(); cancel(nil) }
}
