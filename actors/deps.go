// Package actors holds what the manager, server and session actors share:
// the runtime services they are handed (Deps), the panic-logging middleware
// and the supervision strategy.
package actors

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/jonboulle/clockwork"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/propagation"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/binding"
	"github.com/openprogram/mcpvisor/internal/mcpconn"
	"github.com/openprogram/mcpvisor/internal/procs"
	"github.com/openprogram/mcpvisor/prompts"
	"github.com/openprogram/mcpvisor/status"
	"github.com/openprogram/mcpvisor/tokenstore"
	"github.com/openprogram/mcpvisor/tools"
)

// Deps are the runtime services every actor of one Runtime uses. One value
// per Runtime; nothing here is package-level.
type Deps struct {
	Logger   *slog.Logger
	Registry *tools.Registry
	// Events is the runtime's one event stream. Actors emit what happens
	// (state changes, sessions, listings, logins) into it; the status
	// board (its reducer, the only writer of status), the log and the
	// host consume it. No actor writes status or logs a lifecycle line.
	Events *events.Bus
	// Board is the status board, for actors to read (Describe): only the
	// Bus writes it, through its reducer.
	Board *status.Board
	// Tails holds each server's stderr tail by name, for the sessions that
	// write it and the status board that reads it.
	Tails *Tails
	// Work tracks goroutines that outlive a Receive (dials, closes). An
	// actor may stop before its goroutines finish; Shutdown waits for
	// Work so that no process or goroutine outlives the Runtime.
	Work *sync.WaitGroup
	// Grace is each of the two stop grace periods of a stdio server
	// (Options.StopGrace, resolved).
	Grace time.Duration
	// KeepAlive is the interval between liveness probes of each ready
	// session (Options.KeepAlive, resolved); 0: none.
	KeepAlive time.Duration
	// Restart is how a lost session is restarted (Options.Restart,
	// resolved).
	Restart RestartPolicy
	// Client names us to servers in initialize.
	Client *mcp.Implementation
	// Config is the configured server set in file order, published by the
	// manager (its only writer) after every change, for readers that must
	// not wait for an actor.
	Config *atomic.Pointer[config.File]
	// Transport, if set, supplies the transport of a server instead of its
	// config (tests and benchmarks: in-memory servers).
	Transport func(config.Server) mcp.Transport
	// Elicit answers a server's elicitation/create requests; nil declines
	// them. server is the server's configured name.
	Elicit func(ctx context.Context, server string, req *mcp.ElicitRequest) (*mcp.ElicitResult, error)
	// Sample answers a server's sampling/createMessage with the host's
	// model; nil answers with an error saying sampling is not configured.
	Sample func(ctx context.Context, server string, req *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error)
	// Roots are offered to every server (roots/list).
	Roots []*mcp.Root
	// ListRoots, if set, answers a server's roots/list instead of Roots
	// (mcpconn.Features.ListRoots); server is its configured name.
	ListRoots func(ctx context.Context, server string) ([]*mcp.Root, error)
	// WatchRoots, if set, gets each new session's way to tell its server
	// the roots changed (mcpconn.Features.WatchRoots).
	WatchRoots func(server string, notify func())
	// RendersApps advertises the MCP Apps extension to every server
	// (Options.RendersApps).
	RendersApps bool
	// Prompts is the registry of the servers' prompts.
	Prompts *prompts.Registry
	// Bindings finds each running server actor's binding (its current
	// connection) by name, for requests that name a server. Each server
	// actor puts its own in when it starts and drops it when it stops.
	Bindings *binding.Directory
	// Tokens stores the OAuth logins of oauth servers.
	Tokens tokenstore.Store
	// OpenURL sends the user to an authorization URL during a login.
	OpenURL func(ctx context.Context, url string) error
	// LoginTimeout bounds the wait for the browser (Options.LoginTimeout,
	// resolved).
	LoginTimeout time.Duration
	// RequestMark marks every HTTP request the Runtime sends (its id), so
	// that its management API refuses them.
	RequestMark string
	// AllowPrivateOAuthHosts: Options.AllowPrivateOAuthHosts.
	AllowPrivateOAuthHosts bool
	// LookupEnv expands the references of a server's config at connect
	// (Options.LookupEnv, resolved; nil: os.LookupEnv).
	LookupEnv func(string) (string, bool)
	// Procs accounts for the stdio servers' processes, by server name.
	Procs *procs.Tracker
	// Clock drives the timers that decide what happens next (the restart
	// backoff and its reset, the relist retry, the login timeout, the
	// manager's respawn) and, on the Runtime, stamps the events, so that
	// next_retry_at and the event times agree with it. Nil means the real
	// clock; tests set a fake one and advance it.
	Clock clockwork.Clock
	// Gone, if set, is called (on the manager's mailbox; it must not
	// block) when a server is removed, just before its ServerRemoved, so
	// that state kept by name is dropped and its last word (a count held
	// back) precedes the removal; a server added again under the name
	// starts afresh.
	Gone func(name string)
	// Subscriptions, if set, is the host's set of resource subscriptions
	// of the named server, which outlives every session and server actor
	// incarnation: each new session subscribes to its URIs (see
	// mcpconn.Features.Subscriptions).
	Subscriptions func(server string) mcpconn.Subscriptions
	// Freed, if set, is called (on the manager's mailbox; it must not
	// block) once a removed server's actor stopped and its processes are
	// gone: nothing of it can ask for anything any more.
	Freed func(name string)
	// Propagator, if set, writes the trace context of each tool call,
	// resource read and prompt get into its request _meta
	// (mcpconn.Options.Propagator); nil without a TracerProvider.
	Propagator propagation.TextMapPropagator
}

// clock is d.Clock, or the real clock if none is set.
func (d *Deps) clock() clockwork.Clock {
	if d.Clock == nil {
		return clockwork.NewRealClock()
	}
	return d.Clock
}

// Now is the current time on d's clock.
func (d *Deps) Now() time.Time { return d.clock().Now() }

// Since is the time elapsed since t on d's clock.
func (d *Deps) Since(t time.Time) time.Duration { return d.clock().Since(t) }

// AfterFunc calls f in its own goroutine once delay has passed on d's
// clock, unless the returned timer is stopped first.
func (d *Deps) AfterFunc(delay time.Duration, f func()) clockwork.Timer {
	return d.clock().AfterFunc(delay, f)
}

// RestartPolicy is how a server actor restarts a lost session, and the
// manager respawns a server actor that died: after an exponential backoff
// with jitter, reset once a session stayed ready for ResetAfter. The zero
// value means the defaults below; runtime.Options resolves them once, so
// the policy on Deps is complete.
type RestartPolicy struct {
	// Initial is the first delay (default 200ms); each next one doubles.
	Initial time.Duration
	// Max caps the delay before jitter (default 30s).
	Max time.Duration
	// Jitter is the random spread around each delay (default 0.2: ±20 %).
	Jitter float64
	// ResetAfter is how long a session must stay ready for the next loss
	// to start again from Initial (default 60s).
	ResetAfter time.Duration
}

// WithDefaults fills in the zero fields.
func (p RestartPolicy) WithDefaults() RestartPolicy {
	if p.Initial <= 0 {
		p.Initial = 200 * time.Millisecond
	}
	if p.Max <= 0 {
		p.Max = 30 * time.Second
	}
	if p.Jitter <= 0 {
		p.Jitter = 0.2
	}
	if p.ResetAfter <= 0 {
		p.ResetAfter = 60 * time.Second
	}
	return p
}

// Backoff is a fresh exponential backoff on the policy (its zero fields
// taking the defaults): Initial, doubling, capped at Max, spread by
// Jitter. The one place a backoff is built from the policy, for the
// server actor's session restarts and the manager's respawns alike.
func (p RestartPolicy) Backoff() *backoff.ExponentialBackOff {
	p = p.WithDefaults()
	b := &backoff.ExponentialBackOff{
		InitialInterval: p.Initial, Multiplier: 2, MaxInterval: p.Max, RandomizationFactor: p.Jitter,
	}
	b.Reset()
	return b
}
