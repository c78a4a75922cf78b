package runtime

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/openprogram/mcpvisor/internal/mcpconn"
)

// Bounds of the resource subscriptions a Runtime holds, so that a host in
// a loop cannot make it hold unbounded state (or a server unbounded
// streams): a subscription beyond either fails with
// ErrTooManySubscriptions.
const (
	// MaxSubscriptionsPerServer is how many subscriptions (holders, not
	// URIs) one server may have at a time.
	MaxSubscriptionsPerServer = 256
	// MaxSubscriptions is how many the Runtime holds at a time, in all.
	MaxSubscriptions = 4096
)

// Outcomes of resource subscriptions.
var (
	// ErrTooManySubscriptions: a subscription over MaxSubscriptionsPerServer
	// or MaxSubscriptions; end one first.
	ErrTooManySubscriptions = errors.New("too many resource subscriptions")
	// ErrUnknownSubscription: no live subscription has the id (never had
	// it, or it ended: closed, its context done, its server removed).
	ErrUnknownSubscription = errors.New("no such resource subscription")
	// ErrSubscriptionClosed is the Err of a subscription ended by Close.
	ErrSubscriptionClosed = errors.New("resource subscription closed")
)

// ResourceSubscription is one holder's subscription to a resource of a
// server. While it lives, the server's notifications/resources/updated of
// the URI arrive as events.ResourceUpdated on the Runtime's event stream.
// It survives reconnects and restarts of its server (each new session
// subscribes again) and a subscription stream the server ends (see
// SubscribeResource), and ends with Close, with the context it was made
// with, when its server is removed from the config, or at Shutdown; Done
// and Err say when and why. Its methods are safe for concurrent use.
type ResourceSubscription struct {
	id, server, uri string
	set             *subscriptionSet
	stop            func() bool // stops the context watch
	done            chan struct{}
	err             error // why it ended, set before done is closed
}

// ID names the subscription in the management API
// (DELETE /api/mcp/resources/subscriptions/{id}).
func (s *ResourceSubscription) ID() string { return s.id }

// Server is the configured name of the subscribed server.
func (s *ResourceSubscription) Server() string { return s.server }

// URI is the subscribed resource.
func (s *ResourceSubscription) URI() string { return s.uri }

// Done is closed when the subscription ended.
func (s *ResourceSubscription) Done() <-chan struct{} { return s.done }

// Err says why the subscription ended (ErrSubscriptionClosed, the
// context's error, ErrUnknownServer for a removed server,
// ErrShuttingDown); nil while it lives.
func (s *ResourceSubscription) Err() error {
	select {
	case <-s.done:
		return s.err
	default:
		return nil
	}
}

// Close ends the subscription. When it was the last one of its URI the
// server is unsubscribed (within its timeout_seconds); the error is that
// of the unsubscribe, which does not keep the subscription alive. Close
// may be called more than once.
func (s *ResourceSubscription) Close() error {
	s.stop()
	return s.set.end(s, ErrSubscriptionClosed)
}

// SubscribeResource subscribes to a resource of the named server, whose
// session must declare resources.subscribe (else ErrNotDeclared); an
// unknown server fails with ErrUnknownServer, one without a live session
// with ErrNotReady. The subscription ends when ctx is done or with Close.
//
// Subscriptions are counted per URI: the server is subscribed when the
// first holder of a URI subscribes and unsubscribed when the last one
// ends, so ending one subscription never ends another's. On a 2026-07-28
// session the SDK answers before the server acknowledged the
// subscription, so a nil error means "requested".
//
// On 2026-07-28 sessions each URI has a subscriptions/listen stream of its
// own. One the server ends or refuses inside a live session (stdio, or
// Streamable HTTP where the stream is a POST response) is opened again
// while the URI has holders, after a backoff doubling from 100 ms; after
// five reopens without a stream lasting a minute the URI waits for the
// next session, with one warning in the log. Updates sent while a stream
// was down are lost (the host may read the resource again).
func (r *Runtime) SubscribeResource(ctx context.Context, server, uri string) (*ResourceSubscription, error) {
	s, err := r.subscribeResource(ctx, server, uri)
	if err != nil {
		return nil, err
	}
	s.stop = context.AfterFunc(ctx, func() { _ = s.set.end(s, context.Cause(ctx)) })
	return s, nil
}

// subscribeResource is SubscribeResource without the context watch: the
// management API's subscriptions live until their DELETE.
func (r *Runtime) subscribeResource(ctx context.Context, server, uri string) (*ResourceSubscription, error) {
	what := fmt.Sprintf("subscribing to %q", uri)
	if uri == "" {
		return nil, fmt.Errorf("subscribing on %q: the resource URI is empty", server)
	}
	conn, err := r.connOf(server, what)
	if err != nil {
		return nil, err
	}
	if caps := conn.Capabilities(); caps.Resources == nil || !caps.Resources.Subscribe {
		return nil, fmt.Errorf("%s on %q: resources.subscribe: %w", what, server, ErrNotDeclared)
	}
	return r.subs.add(ctx, server, uri, func(ctx context.Context) error {
		return r.subscribeOn(ctx, server, uri, conn)
	})
}

// subscribeOn subscribes conn, and whatever session replaced it
// meanwhile: a session that came up while the URI was being added may
// have read the wanted URIs before it was among them.
func (r *Runtime) subscribeOn(ctx context.Context, server, uri string, conn *mcpconn.Conn) error {
	for range 3 {
		if err := conn.Subscribe(ctx, uri); err != nil {
			return err
		}
		b := r.bindings.Get(server)
		if b == nil {
			return nil
		}
		next := b.Current()
		if next == nil || next == conn {
			return nil
		}
		conn = next
	}
	return nil
}

// unsubscribeCurrent unsubscribes the server's current session from uri,
// if it has one: the one a later session would not subscribe again.
func (r *Runtime) unsubscribeCurrent(server, uri string) error {
	b := r.bindings.Get(server)
	if b == nil {
		return nil
	}
	conn := b.Current()
	if conn == nil {
		return nil
	}
	return conn.Unsubscribe(context.Background(), uri) // bounded by timeout_seconds
}

// subscriptionSet is the Runtime's resource subscriptions: by id, and per
// server the number of holders of each URI. It outlives every connection
// and server actor incarnation (the sessions read it through serverSubs);
// a server's entry goes when the server is removed.
type subscriptionSet struct {
	// unsubscribe tells the server's current session that the last holder
	// of uri left.
	unsubscribe func(server, uri string) error

	mu      sync.Mutex
	closed  error // set at Shutdown: nothing is added any more
	byID    map[string]*ResourceSubscription
	servers map[string]*serverSubs
}

// serverSubs are one server's subscriptions. wire serialises the
// server's subscribe and unsubscribe requests, so that a first holder's
// subscribe can never be overtaken by a last holder's unsubscribe of the
// same URI; it is held across a request, mu never is.
type serverSubs struct {
	wire    sync.Mutex
	holders map[string]int // per URI
	n       int            // sum of holders
}

// add makes a subscription of server's uri, subscribing the server (with
// subscribe, under the server's wire lock) when it is the URI's first.
func (s *subscriptionSet) add(ctx context.Context, server, uri string, subscribe func(context.Context) error) (*ResourceSubscription, error) {
	s.mu.Lock()
	if s.closed != nil {
		s.mu.Unlock()
		return nil, fmt.Errorf("subscribing to %q on %q: %w", uri, server, s.closed)
	}
	ss := s.serverLocked(server)
	s.mu.Unlock()

	ss.wire.Lock()
	defer ss.wire.Unlock()
	s.mu.Lock()
	total := len(s.byID)
	switch {
	case ss.n >= MaxSubscriptionsPerServer:
		s.mu.Unlock()
		return nil, fmt.Errorf("subscribing to %q on %q: %w (at most %d per server)", uri, server, ErrTooManySubscriptions, MaxSubscriptionsPerServer)
	case total >= MaxSubscriptions:
		s.mu.Unlock()
		return nil, fmt.Errorf("subscribing to %q on %q: %w (at most %d in all)", uri, server, ErrTooManySubscriptions, MaxSubscriptions)
	case s.servers[server] != ss: // removed meanwhile
		s.mu.Unlock()
		return nil, fmt.Errorf("subscribing to %q on %q: %w", uri, server, ErrUnknownServer)
	}
	sub := &ResourceSubscription{id: "sub-" + strings.ToLower(rand.Text()[:16]), server: server, uri: uri,
		set: s, stop: func() bool { return false }, done: make(chan struct{})}
	first := ss.holders[uri] == 0
	ss.holders[uri]++
	ss.n++
	s.byID[sub.id] = sub
	s.mu.Unlock()
	if first {
		if err := subscribe(ctx); err != nil {
			s.mu.Lock()
			s.dropLocked(sub, err)
			s.mu.Unlock()
			return nil, err
		}
	}
	return sub, nil
}

// serverLocked is server's entry, made if need be.
func (s *subscriptionSet) serverLocked(server string) *serverSubs {
	if s.byID == nil {
		s.byID, s.servers = map[string]*ResourceSubscription{}, map[string]*serverSubs{}
	}
	ss := s.servers[server]
	if ss == nil {
		ss = &serverSubs{holders: map[string]int{}}
		s.servers[server] = ss
	}
	return ss
}

// end ends sub with why and, when it was its URI's last holder,
// unsubscribes the server. Ending an ended subscription does nothing.
func (s *subscriptionSet) end(sub *ResourceSubscription, why error) error {
	s.mu.Lock()
	ss := s.servers[sub.server]
	s.mu.Unlock()
	if ss == nil { // the server was removed: the subscription ended with it
		return nil
	}
	ss.wire.Lock()
	defer ss.wire.Unlock()
	s.mu.Lock()
	last, ok := s.dropLocked(sub, why)
	s.mu.Unlock()
	if !ok || !last {
		return nil
	}
	return s.unsubscribe(sub.server, sub.uri)
}

// dropLocked removes sub and says whether it was its URI's last holder;
// ok is false if it had ended already.
func (s *subscriptionSet) dropLocked(sub *ResourceSubscription, why error) (last, ok bool) {
	if s.byID[sub.id] != sub {
		return false, false
	}
	delete(s.byID, sub.id)
	ss := s.servers[sub.server]
	ss.n--
	if ss.holders[sub.uri]--; ss.holders[sub.uri] == 0 {
		delete(ss.holders, sub.uri)
		last = true
	}
	sub.err = why
	close(sub.done)
	return last, true
}

// get is the live subscription of the id.
func (s *subscriptionSet) get(id string) (*ResourceSubscription, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sub, ok := s.byID[id]
	return sub, ok
}

// serverGone ends every subscription of a removed server (no
// unsubscribe: the server is going). It never blocks on a request.
func (s *subscriptionSet) serverGone(server string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropServerLocked(server, fmt.Errorf("server %q was removed: %w", server, ErrUnknownServer))
}

func (s *subscriptionSet) dropServerLocked(server string, why error) {
	if s.servers[server] == nil {
		return
	}
	for _, sub := range s.byID {
		if sub.server == server {
			s.dropLocked(sub, why)
		}
	}
	delete(s.servers, server)
}

// close ends every subscription at Shutdown and refuses new ones.
func (s *subscriptionSet) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = ErrShuttingDown
	for server := range s.servers {
		s.dropServerLocked(server, ErrShuttingDown)
	}
}

// of is server's view of the set, for its sessions.
func (s *subscriptionSet) of(server string) mcpconn.Subscriptions {
	return serverView{set: s, server: server}
}

// serverView is one server's wanted URIs (mcpconn.Subscriptions).
type serverView struct {
	set    *subscriptionSet
	server string
}

func (v serverView) URIs() []string {
	v.set.mu.Lock()
	defer v.set.mu.Unlock()
	ss := v.set.servers[v.server]
	if ss == nil {
		return nil
	}
	uris := make([]string, 0, len(ss.holders))
	for uri := range ss.holders {
		uris = append(uris, uri)
	}
	slices.Sort(uris)
	return uris
}

func (v serverView) Wants(uri string) bool {
	v.set.mu.Lock()
	defer v.set.mu.Unlock()
	ss := v.set.servers[v.server]
	return ss != nil && ss.holders[uri] > 0
}
