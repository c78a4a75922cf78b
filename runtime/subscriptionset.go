package runtime

import (
	"context"
	"crypto/rand"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/openprogram/mcpvisor/internal/mcpconn"
)

// subscriptionSet is the Runtime's resource subscriptions: by id, and per
// server the holders of each URI. It outlives every connection and server
// actor incarnation (the sessions read it through serverView); a server's
// entry goes when the server is removed.
type subscriptionSet struct {
	// unsubscribe tells the server's current session that the last holder
	// of uri left, within ctx.
	unsubscribe func(ctx context.Context, server, uri string) error

	mu      sync.Mutex
	closed  error // set at Shutdown: nothing is added any more
	byID    map[string]*ResourceSubscription
	servers map[string]*serverSubs
	// gone are the servers removed whose actor may still run (from the
	// manager's Gone to its Freed): their binding still finds a session,
	// but nothing of the name may be subscribed, since nothing would end
	// it. A server of the name is only started again after Freed.
	gone map[string]bool
}

// serverSubs are one server's subscriptions, per URI.
type serverSubs struct {
	uris map[string]*uriSubs
	n    int // sum of holders
}

// uriSubs is one URI of a server. wire serialises the URI's subscribe
// and unsubscribe requests, so that a first holder's subscribe can never
// be overtaken by a last holder's unsubscribe; it is held across a
// request, the set's mu never is. Requests of other URIs do not wait for
// it. subscribed says the server was asked for the URI (and not told to
// stop since): whoever holds wire brings it in line with holders. The
// entry lives while it has holders or users (refs: those waiting for
// wire or holding it), so the set keeps no entry per URI ever asked.
type uriSubs struct {
	wire       chan struct{} // one slot: held while full
	holders    int
	refs       int
	subscribed bool
}

// lock takes the URI's wire, or fails when ctx ends first.
func (u *uriSubs) lock(ctx context.Context) error {
	select {
	case u.wire <- struct{}{}:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

func (u *uriSubs) unlock() { <-u.wire }

// use is server's entry of uri, made if need be, counted as used until
// release.
func (s *subscriptionSet) useLocked(ss *serverSubs, uri string) *uriSubs {
	u := ss.uris[uri]
	if u == nil {
		u = &uriSubs{wire: make(chan struct{}, 1)}
		ss.uris[uri] = u
	}
	u.refs++
	return u
}

// release ends a use of u, dropping the entry when nothing holds it.
func (s *subscriptionSet) release(ss *serverSubs, uri string, u *uriSubs) {
	s.mu.Lock()
	defer s.mu.Unlock()
	u.refs--
	if u.refs == 0 && u.holders == 0 && !u.subscribed && ss.uris[uri] == u {
		delete(ss.uris, uri)
	}
}

// refusedLocked says why nothing of server may be subscribed now, if so.
func (s *subscriptionSet) refusedLocked(server string) error {
	switch {
	case s.closed != nil:
		return s.closed
	case s.gone[server]:
		return fmt.Errorf("server %q was removed: %w", server, ErrUnknownServer)
	}
	return nil
}

// add makes a subscription of server's uri, subscribing the server (with
// subscribe, under the URI's wire lock) when it is the URI's first. When
// watch is set the subscription ends with it; the watch is registered
// before the subscription can be seen, and stopped when it ends.
func (s *subscriptionSet) add(ctx, watch context.Context, server, uri string, subscribe func(context.Context) error) (*ResourceSubscription, error) {
	what := fmt.Sprintf("subscribing to %q on %q", uri, server)
	s.mu.Lock()
	if err := s.refusedLocked(server); err != nil {
		s.mu.Unlock()
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	ss := s.serverLocked(server)
	u := s.useLocked(ss, uri)
	s.mu.Unlock()
	defer s.release(ss, uri, u)

	if err := u.lock(ctx); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer u.unlock()
	s.mu.Lock()
	if err := s.refusedLocked(server); err != nil {
		s.mu.Unlock()
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	switch {
	case s.servers[server] != ss: // removed meanwhile (and freed already)
		s.mu.Unlock()
		return nil, fmt.Errorf("%s: %w", what, ErrUnknownServer)
	case ss.n >= MaxSubscriptionsPerServer:
		s.mu.Unlock()
		return nil, fmt.Errorf("%s: %w (at most %d per server)", what, ErrTooManySubscriptions, MaxSubscriptionsPerServer)
	case len(s.byID) >= MaxSubscriptions:
		s.mu.Unlock()
		return nil, fmt.Errorf("%s: %w (at most %d in all)", what, ErrTooManySubscriptions, MaxSubscriptions)
	}
	sub := &ResourceSubscription{id: "sub-" + strings.ToLower(rand.Text()[:16]), server: server, uri: uri,
		set: s, stop: func() bool { return false }, done: make(chan struct{})}
	if watch != nil {
		// Its callback waits for mu, then for the wire: it ends sub after
		// the subscribe below, whatever the order.
		sub.stop = context.AfterFunc(watch, func() { _ = s.end(context.Background(), sub, context.Cause(watch)) })
	}
	u.holders++
	ss.n++
	s.byID[sub.id] = sub
	first := !u.subscribed
	s.mu.Unlock()
	if first {
		if err := subscribe(ctx); err != nil {
			s.mu.Lock()
			_, dropped := s.dropLocked(sub, err)
			s.mu.Unlock()
			if !dropped { // ended meanwhile: that is the outcome
				return nil, fmt.Errorf("%s: %w", what, sub.err)
			}
			return nil, err
		}
		s.mu.Lock()
		u.subscribed = true
		s.mu.Unlock()
	}
	// Its server may have been removed, the runtime shut down, or its
	// end come while the server was asked: say so rather than hand back
	// an ended subscription, and undo the subscribe an end that could not
	// wait for it left (see end).
	if err := sub.Err(); err != nil {
		_ = s.unsubscribeIfUnheld(ctx, server, uri, u)
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return sub, nil
}

// unsubscribeIfUnheld unsubscribes the server from uri if it was asked
// for it and nobody holds it any more (not for a server removed or at
// Shutdown: its sessions are going). The caller holds u's wire.
func (s *subscriptionSet) unsubscribeIfUnheld(ctx context.Context, server, uri string, u *uriSubs) error {
	s.mu.Lock()
	undo := u.subscribed && u.holders == 0 && s.refusedLocked(server) == nil
	if undo {
		u.subscribed = false
	}
	s.mu.Unlock()
	if !undo {
		return nil
	}
	return s.unsubscribe(ctx, server, uri)
}

// serverLocked is server's entry, made if need be.
func (s *subscriptionSet) serverLocked(server string) *serverSubs {
	if s.byID == nil {
		s.byID, s.servers = map[string]*ResourceSubscription{}, map[string]*serverSubs{}
	}
	ss := s.servers[server]
	if ss == nil {
		ss = &serverSubs{uris: map[string]*uriSubs{}}
		s.servers[server] = ss
	}
	return ss
}

// end ends sub with why and, when it was its URI's last holder,
// unsubscribes the server within ctx. Ending an ended subscription does
// nothing. The holder goes at once; only the unsubscribe waits for a
// request of the URI in flight. When ctx ends first, end says so and
// leaves the unsubscribe to that request's holder, or to nobody (the
// server may then go on sending updates of the URI, which are no longer
// events, until its session ends; the next one is not subscribed).
func (s *subscriptionSet) end(ctx context.Context, sub *ResourceSubscription, why error) error {
	s.mu.Lock()
	last, ok := s.dropLocked(sub, why)
	if !ok || !last {
		s.mu.Unlock()
		return nil
	}
	ss := s.servers[sub.server]
	u := s.useLocked(ss, sub.uri)
	s.mu.Unlock()
	defer s.release(ss, sub.uri, u)
	if err := u.lock(ctx); err != nil {
		return fmt.Errorf("unsubscribing from %q on %q: %w", sub.uri, sub.server, err)
	}
	defer u.unlock()
	return s.unsubscribeIfUnheld(ctx, sub.server, sub.uri, u)
}

// dropLocked removes sub, stops its context watch and says whether it was
// its URI's last holder; ok is false if it had ended already.
func (s *subscriptionSet) dropLocked(sub *ResourceSubscription, why error) (last, ok bool) {
	if s.byID[sub.id] != sub {
		return false, false
	}
	delete(s.byID, sub.id)
	sub.stop()
	ss := s.servers[sub.server]
	ss.n--
	u := ss.uris[sub.uri]
	if u.holders--; u.holders == 0 {
		last = true
		if u.refs == 0 && !u.subscribed {
			delete(ss.uris, sub.uri)
		}
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
// unsubscribe: the server is going) and refuses new ones until freed. It
// never blocks on a request.
func (s *subscriptionSet) serverGone(server string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gone == nil {
		s.gone = map[string]bool{}
	}
	s.gone[server] = true
	s.dropServerLocked(server, fmt.Errorf("server %q was removed: %w", server, ErrUnknownServer))
}

// freed says a removed server's actor is gone: its name may be subscribed
// again (once a server of the name runs).
func (s *subscriptionSet) freed(server string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.gone, server)
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
	uris := make([]string, 0, len(ss.uris))
	for uri, u := range ss.uris {
		if u.holders > 0 {
			uris = append(uris, uri)
		}
	}
	slices.Sort(uris)
	return uris
}

func (v serverView) Wants(uri string) bool {
	v.set.mu.Lock()
	defer v.set.mu.Unlock()
	ss := v.set.servers[v.server]
	return ss != nil && ss.uris[uri] != nil && ss.uris[uri].holders > 0
}
