package mcpconn

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/redact"
)

// Subscriptions is the set of resource URIs a host wants updates of on
// every session of one server. It belongs to the host side (the runtime)
// and outlives any one Conn: each new session is subscribed to its URIs,
// and only updates of a URI it Wants become events. Both methods are
// called from the connection's goroutines and must not block.
type Subscriptions interface {
	// URIs are the wanted URIs, each once.
	URIs() []string
	// Wants reports whether uri is wanted.
	Wants(uri string) bool
}

// maxURIBytes bounds the URI an event carries: a server's URI is its own
// words, of any length.
const maxURIBytes = 2048

// resourceUpdated emits a server's notifications/resources/updated as an
// events.ResourceUpdated, for the URIs the host subscribed to only (a
// server cannot fill the event stream with updates nobody asked for), at
// most one per URI per UpdateInterval (see updateThrottle).
func resourceUpdated(updates *updateThrottle, name string, subs Subscriptions, scrub *redact.Scrubber, p *mcp.ResourceUpdatedNotificationParams) {
	if p == nil || subs == nil || !subs.Wants(p.URI) {
		return
	}
	updates.offer(p.URI, events.ResourceUpdated{Header: events.Header{Server: name}, URI: scrub.Line(p.URI, maxURIBytes, false)})
}

// Subscribe asks the server for notifications/resources/updated of uri.
// On a 2026-07-28 session the SDK opens a subscriptions/listen stream for
// the URI and returns before the server acknowledges it (and does nothing
// for a URI it already listens to; a stream the server ends is reopened
// by the Conn, see reopener); on older sessions it is the
// resources/subscribe request. Subscribe and Unsubscribe of one URI are
// serialised with the Conn's own reopening of it (see uriLocks).
func (c *Conn) Subscribe(ctx context.Context, uri string) error {
	return c.do(ctx, op{verb: "subscribing to", arg: uri}, func(ctx context.Context) error {
		return c.reopen.hostSubscribe(ctx, uri)
	})
}

// Unsubscribe ends the subscription to uri: on a 2026-07-28 session it
// closes the URI's stream, on older ones it sends resources/unsubscribe.
func (c *Conn) Unsubscribe(ctx context.Context, uri string) error {
	return c.do(ctx, op{verb: "unsubscribing from", arg: uri}, func(ctx context.Context) error {
		return c.reopen.hostUnsubscribe(ctx, uri)
	})
}

// Complete asks the server for completions of one argument of a prompt
// (ref.Type "ref/prompt") or one variable of a resource template
// ("ref/resource"), given the value typed so far and the values of the
// other arguments.
func (c *Conn) Complete(ctx context.Context, ref *mcp.CompleteReference, argument, value string, others map[string]string) (res *mcp.CompleteResult, err error) {
	err = c.do(ctx, op{verb: "completing", arg: argument}, func(ctx context.Context) error {
		p := &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteParamsArgument{Name: argument, Value: value}}
		if len(others) > 0 {
			p.Context = &mcp.CompleteContext{Arguments: others}
		}
		res, err = c.cs.Complete(ctx, p)
		return err
	})
	if res != nil {
		// Values cut off are values the server has more of.
		res.Completion.HasMore = res.Completion.HasMore || len(res.Completion.Values) > MaxCompletionValues
		res.Completion.Values = c.boundValues(res.Completion.Values)
	}
	return res, err
}

// Bounds of a completion answer: the spec caps the values at 100; each is
// the server's words, of any length.
const (
	MaxCompletionValues     = 100
	maxCompletionValueBytes = 1024
)

// boundValues keeps at most MaxCompletionValues values, each scrubbed
// and cut to maxCompletionValueBytes (a server may echo what it was
// given, a token included).
func (c *Conn) boundValues(values []string) []string {
	out := make([]string, 0, min(len(values), MaxCompletionValues))
	for _, v := range values[:min(len(values), MaxCompletionValues)] {
		out = append(out, c.scrub.Line(v, maxCompletionValueBytes, false))
	}
	return out
}
