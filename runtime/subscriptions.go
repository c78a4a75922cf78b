package runtime

import (
	"context"
	"errors"
	"fmt"

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
	stop            func() bool // stops the context watch; set before it is seen
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
	return s.close(context.Background())
}

// close is Close within ctx (the DELETE's request): ctx bounds the wait
// for another request of the URI and the unsubscribe; the subscription
// ends whatever ctx does.
func (s *ResourceSubscription) close(ctx context.Context) error {
	return s.set.end(ctx, s, ErrSubscriptionClosed)
}

// SubscribeResource subscribes to a resource of the named server, whose
// session must declare resources.subscribe (else ErrNotDeclared); an
// unknown server fails with ErrUnknownServer, one without a live session
// with ErrNotReady, an empty URI or one over MaxResourceURIBytes with
// ErrBadResourceURI; a server removed meanwhile with ErrUnknownServer and
// Shutdown meanwhile with ErrShuttingDown. The subscription ends when ctx
// is done or with Close.
//
// Subscriptions are counted per URI: the server is subscribed when the
// first holder of a URI subscribes and unsubscribed when the last one
// ends, so ending one subscription never ends another's. On a 2026-07-28
// session the SDK answers before the server acknowledged the
// subscription, so a nil error means "requested". Requests of one URI
// are sent one at a time; those of different URIs do not wait for each
// other.
//
// Updates become events.ResourceUpdated at most once per URI per
// mcpconn.UpdateInterval (250 ms): the first at once, a burst after it as
// one event when the interval ends.
//
// A new session of the server (a reconnect, a restart) is subscribed to
// the wanted URIs once it is up, in the background, four at a time, each
// within timeout_seconds; a server slow to answer, or refusing, never
// fails the session. An update the server sends between the session's
// ready and its subscribe of the URI is lost (the host may read the
// resource again when the server is ready).
//
// On 2026-07-28 sessions each URI has a subscriptions/listen stream of its
// own. One the server ends or refuses inside a live session (stdio, or
// Streamable HTTP where the stream is a POST response) is opened again
// while the URI has holders, after a backoff doubling from 100 ms; after
// five reopens without a stream lasting a minute the URI waits for the
// next session, with one warning in the log. Updates sent while a stream
// was down are lost (the host may read the resource again).
func (r *Runtime) SubscribeResource(ctx context.Context, server, uri string) (*ResourceSubscription, error) {
	return r.subscribeResource(ctx, ctx, server, uri)
}

// subscribeResource is SubscribeResource whose subscription ends with
// watch rather than ctx, if at all: the management API's subscriptions
// live until their DELETE (watch nil).
func (r *Runtime) subscribeResource(ctx, watch context.Context, server, uri string) (*ResourceSubscription, error) {
	what := fmt.Sprintf("subscribing to %q", uri)
	if err := checkResourceURI(uri); err != nil {
		return nil, fmt.Errorf("subscribing on %q: %w", server, err)
	}
	conn, err := r.connOf(server, what)
	if err != nil {
		return nil, err
	}
	if caps := conn.Capabilities(); caps.Resources == nil || !caps.Resources.Subscribe {
		return nil, fmt.Errorf("%s on %q: resources.subscribe: %w", what, server, ErrNotDeclared)
	}
	return r.subs.add(ctx, watch, server, uri, func(ctx context.Context) error {
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
// if it has one: the one a later session would not subscribe again. Like
// subscribeOn it looks again afterwards: a session that came up meanwhile
// may have subscribed uri while it was still wanted.
func (r *Runtime) unsubscribeCurrent(ctx context.Context, server, uri string) error {
	var done *mcpconn.Conn
	var first error
	for range 3 {
		b := r.bindings.Get(server)
		if b == nil {
			return first
		}
		conn := b.Current()
		if conn == nil || conn == done {
			return first
		}
		if err := conn.Unsubscribe(ctx, uri); err != nil && first == nil { // bounded by timeout_seconds
			first = err
		}
		done = conn
	}
	return first
}
