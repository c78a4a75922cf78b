package runtime

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"
)

// Resource subscriptions through the gateway. A client's
// resources/subscribe of a URI the gateway serves (a resource, a
// resource a template of it describes, either under its own URI or the
// mcpvisor: prefix) makes one Runtime.SubscribeResource for that URI,
// shared by every client that subscribes to it: the gateway counts the
// clients, the runtime holds one subscription, and the server is asked
// once. The server's updates reach every subscribed client under the
// URI the client subscribed with. The last client's unsubscribe, or the
// end of its session (subscribed or not, a session that goes away
// unsubscribes), ends the runtime's subscription.

// MaxGatewaySubscriptionsPerSession is how many resources one client of
// the gateway may be subscribed to at a time; a subscribe beyond it
// fails, saying so. With the runtime's own bounds (MaxSubscriptions in
// all, MaxSubscriptionsPerServer) it keeps what clients can make the
// runtime hold bounded.
const MaxGatewaySubscriptionsPerSession = 256

// gatewaySubs are the resource subscriptions of one gateway server's
// clients. Its methods run on the SDK's goroutines (the handlers), the
// mirror's (updated) and each subscribed session's watch.
type gatewaySubs struct {
	rt *Runtime

	mu       sync.Mutex
	uris     map[string]*servedSub                  // by the URI the clients subscribed with
	sessions map[*mcp.ServerSession]map[string]bool // each session's URIs
	pending  map[string]bool                        // URIs updated, not yet sent
	wake     chan struct{}                          // one slot: pending has URIs
}

// servedSub is one URI the gateway's clients subscribed to. wire
// serialises its runtime subscribe and close, so that a first client's
// subscribe cannot be overtaken by a last client's unsubscribe; mu is
// never held across either. The entry lives while it has holders or
// users (refs: those waiting for wire or holding it).
type servedSub struct {
	server, original string
	wire             chan struct{}
	holders          map[*mcp.ServerSession]bool
	refs             int
	sub              *ResourceSubscription // the runtime's, nil when none
}

func newGatewaySubs(r *Runtime) *gatewaySubs {
	return &gatewaySubs{rt: r, uris: map[string]*servedSub{}, sessions: map[*mcp.ServerSession]map[string]bool{},
		pending: map[string]bool{}, wake: make(chan struct{}, 1)}
}

// subscribe is the server's SubscribeHandler.
func (m *mirror) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	if req.Params == nil || req.Session == nil {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "resources/subscribe needs a uri"}
	}
	server, original, ok := m.resourceOf(req.Params.URI)
	if !ok {
		return mcp.ResourceNotFoundError(req.Params.URI)
	}
	err := m.subs.subscribe(ctx, req.Session, req.Params.URI, server, original)
	switch {
	case errors.Is(err, ErrNotDeclared), errors.Is(err, ErrBadResourceURI), errors.Is(err, ErrTooManySubscriptions), errors.Is(err, ErrUnknownServer):
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	}
	return err
}

// unsubscribe is the server's UnsubscribeHandler: unsubscribing what a
// session is not subscribed to does nothing.
func (m *mirror) unsubscribe(ctx context.Context, req *mcp.UnsubscribeRequest) error {
	if req.Params == nil || req.Session == nil {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "resources/unsubscribe needs a uri"}
	}
	return m.subs.unsubscribe(ctx, req.Session, req.Params.URI)
}

// resourceOf is the server and the server's own URI of a URI the gateway
// serves: a listed resource's or one a template served matches (the
// first, by template, when several do). A prefixed URI names its server,
// which must serve the URI after the prefix (under either form: a
// subscription made while two servers shared a URI stays good when one
// goes); an unprefixed one must be served unprefixed.
func (m *mirror) resourceOf(uri string) (string, string, bool) {
	server, original, prefixed := SplitGatewayURI(uri)
	if !prefixed {
		original = uri
	}
	if served := m.servedResources.Load(); served != nil {
		keys := []string{uri}
		if prefixed {
			keys = append(keys, original) // served unprefixed, asked prefixed
		}
		for _, u := range keys {
			if o, ok := (*served)[u]; ok && o.original == original && (!prefixed || o.server == server) {
				return o.server, original, true
			}
		}
	}
	owners := m.templates.Load()
	if owners == nil {
		return "", "", false
	}
	for _, tmpl := range sortedKeys(*owners) {
		o := (*owners)[tmpl]
		if (prefixed && o.server != server) || (!prefixed && o.original != tmpl) {
			continue // another server's, or (unprefixed) a prefixed template
		}
		if t, err := uritemplate.New(o.original); err == nil && t.Regexp().MatchString(original) {
			return o.server, original, true
		}
	}
	return "", "", false
}

// subscribe adds session as a holder of uri (original on server),
// subscribing through the runtime when no other client holds it. A
// session subscribed already stays so.
func (g *gatewaySubs) subscribe(ctx context.Context, session *mcp.ServerSession, uri, server, original string) error {
	g.mu.Lock()
	held := g.sessions[session]
	switch {
	case held[uri]:
		g.mu.Unlock()
		return nil
	case len(held) >= MaxGatewaySubscriptionsPerSession:
		g.mu.Unlock()
		return fmt.Errorf("subscribing to %q: %w (at most %d per client session)", uri, ErrTooManySubscriptions, MaxGatewaySubscriptionsPerSession)
	}
	if held == nil {
		held = map[string]bool{}
		g.sessions[session] = held
		// The session's end unsubscribes what it still holds. Wait
		// returns once the session's connection closed, whoever closed it
		// (the SDK offers no session end to select on, so this goroutine
		// lasts as long as the host's session, past the gateway's end).
		go func() {
			_ = session.Wait()
			g.sessionEnded(session)
		}()
	}
	e := g.useLocked(uri, server, original)
	held[uri], e.holders[session] = true, true
	g.mu.Unlock()
	defer g.release(uri, e)

	if err := g.settle(ctx, e); err != nil {
		g.mu.Lock()
		delete(e.holders, session)
		delete(g.sessions[session], uri)
		orphan := len(e.holders) == 0 && e.sub != nil
		g.mu.Unlock()
		if orphan {
			// The others left while this one waited: end what they kept
			// for it.
			_ = g.settle(context.WithoutCancel(ctx), e)
		}
		return fmt.Errorf("subscribing to %q: %w", uri, err)
	}
	return nil
}

// unsubscribe ends session's hold of uri, ending the runtime's
// subscription when it was the last.
func (g *gatewaySubs) unsubscribe(ctx context.Context, session *mcp.ServerSession, uri string) error {
	g.mu.Lock()
	e := g.uris[uri]
	if e == nil || !e.holders[session] {
		g.mu.Unlock()
		return nil
	}
	delete(e.holders, session)
	delete(g.sessions[session], uri)
	e.refs++
	g.mu.Unlock()
	defer g.release(uri, e)
	// The hold is gone whatever ctx does (on 2026-07-28 the SDK
	// unsubscribes when the client's stream ended, under its ended
	// context): the wait for the wire is bounded by the request in
	// flight, and the runtime's unsubscribe by the server's timeout.
	return g.settle(context.WithoutCancel(ctx), e)
}

// sessionEnded unsubscribes whatever session still held.
func (g *gatewaySubs) sessionEnded(session *mcp.ServerSession) {
	g.mu.Lock()
	held := g.sessions[session]
	delete(g.sessions, session)
	g.mu.Unlock()
	for uri := range held {
		// Bounded: the wire is held for one request at a time, each
		// within its server's timeout_seconds.
		_ = g.unsubscribe(context.Background(), session, uri)
	}
}

// useLocked is uri's entry, made if need be, counted as used until
// release.
func (g *gatewaySubs) useLocked(uri, server, original string) *servedSub {
	e := g.uris[uri]
	if e == nil {
		e = &servedSub{server: server, original: original, wire: make(chan struct{}, 1), holders: map[*mcp.ServerSession]bool{}}
		g.uris[uri] = e
	}
	e.refs++
	return e
}

// release ends a use of e, dropping the entry when nothing holds it.
func (g *gatewaySubs) release(uri string, e *servedSub) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if e.refs--; e.refs == 0 && len(e.holders) == 0 && e.sub == nil {
		delete(g.uris, uri)
	}
}

// settle brings e's runtime subscription in line with its holders under
// its wire: one while it has holders (again if the last one ended, as a
// removed server's does), none once it has none.
func (g *gatewaySubs) settle(ctx context.Context, e *servedSub) error {
	select {
	case e.wire <- struct{}{}:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	defer func() { <-e.wire }()
	g.mu.Lock()
	held, sub := len(e.holders) > 0, e.sub
	if !held {
		e.sub = nil
	}
	g.mu.Unlock()
	switch {
	case !held && sub != nil:
		return sub.Close()
	case held && (sub == nil || sub.Err() != nil):
		// No watch: the subscription lives until the last holder goes.
		sub, err := g.rt.subscribeResource(ctx, nil, e.server, e.original)
		if err != nil {
			return err
		}
		g.mu.Lock()
		e.sub = sub
		g.mu.Unlock()
	}
	return nil
}

// updated takes the runtime's update of uri on server: every URI a client
// subscribed to it under (its own, the prefixed one) is to be sent.
func (g *gatewaySubs) updated(server, uri string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, served := range []string{uri, GatewayURI(server, uri)} {
		if e := g.uris[served]; e != nil && e.server == server && e.original == uri && len(e.holders) > 0 {
			g.pending[served] = true
		}
	}
	if len(g.pending) > 0 {
		select {
		case g.wake <- struct{}{}:
		default:
		}
	}
}

// forward sends the pending updates to the subscribed clients until ctx
// ends, off the mirror's goroutine. The SDK (v1.8.0) sends a URI's
// update to its subscribers in turn under one 10 s context of its own
// (Server.ResourceUpdated; a ServerSession has no method to send one
// alone), so a client that stopped reading delays the others' update of
// that URI, and the next URIs', by up to 10 s; forward checks ctx
// between URIs, so the gateway's end waits for one send at most. Updates
// of a URI that come while it is being sent coalesce into one; pending
// never holds more URIs than the clients subscribed to.
func (g *gatewaySubs) forward(ctx context.Context, srv *mcp.Server) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-g.wake:
		}
		g.mu.Lock()
		uris := sortedKeys(g.pending)
		clear(g.pending)
		g.mu.Unlock()
		for _, uri := range uris {
			if ctx.Err() != nil {
				return
			}
			_ = srv.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: uri})
		}
	}
}
