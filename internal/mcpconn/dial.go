package mcpconn

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/propagation"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/oauthflow"
	"github.com/openprogram/mcpvisor/internal/procs"
	"github.com/openprogram/mcpvisor/internal/redact"
	"github.com/openprogram/mcpvisor/tokenstore"
)

// Options configure Dial.
type Options struct {
	// Server is the server's configuration. It must be valid.
	Server config.Server
	// Logger receives the server's stderr lines and connection events. It
	// should already carry the server's name. Dial wraps it so that every
	// record is scrubbed of the connection's secrets (see internal/redact).
	Logger *slog.Logger
	// Emit receives the events this connection is the source of: the
	// server's log messages (events.ServerLog, rate-limited as its stderr
	// is) and its OAuth token renewals (events.TokenRefreshed,
	// events.RefreshRefused), each with the server's name in its Header
	// and every text scrubbed of the connection's secrets. It must not
	// block. Nil: no events.
	Emit func(events.Event)
	// Tail keeps the server's last stderr lines; it outlives one Conn.
	Tail *Tail
	// Grace is each of the two stop grace periods: how long stop waits
	// after closing stdin before SIGTERM, and again before SIGKILL. It
	// must be set (> 0); the runtime passes its resolved StopGrace.
	Grace time.Duration
	// Client names this client to the server in initialize. It must be
	// set; the runtime passes its resolved ClientName and ClientVersion.
	Client *mcp.Implementation
	// Transport, if set, replaces the server's own transport. Tests and
	// benchmarks use it for in-memory servers; no process is started.
	Transport mcp.Transport
	// Go runs background work that may outlive Dial or Close (cleanup of
	// an abandoned dial, a process being stopped). The owner waits for it
	// at shutdown. It must not block: a connection's watcher hands over
	// its loss report through it before it closes Done. Default: a plain
	// goroutine.
	Go func(func())
	// KeepAlive is the interval between liveness probes of the ready
	// session (see keepalive.go), on the real clock whatever Clock is;
	// ≤ 0: none. The runtime passes its resolved Options.KeepAlive.
	KeepAlive time.Duration
	// Clock runs the dial's connect_timeout_seconds deadline (which stops
	// while a login waits) and the throttle of its starting output. Default:
	// the real clock; tests set a fake one. The requests of the session
	// (timeout_seconds, restarted by a call's progress up to
	// max_call_seconds) run on real time.
	Clock clockwork.Clock
	// Features are the client features the host offers (sampling,
	// elicitation, roots) and the hook for list changes. The client
	// advertises sampling and elicitation either way; without a host
	// callback a request is answered at once (an error, a decline).
	Features Features
	// UserAction: the user asked for this connection (add, edit, restart),
	// so an oauth server that needs a new login may open the browser.
	UserAction bool
	// Login runs an interactive OAuth login for an oauth server. Nil: a
	// login fails with oauthflow.ErrNeedsReauth. The dial's timeout does
	// not run while it waits.
	Login oauthflow.Login
	// Tokens stores the OAuth logins of oauth servers across restarts.
	Tokens tokenstore.Store
	// RequestMark is the value of RequestMarkHeader on every HTTP request
	// of a remote server, OAuth included: the owning Runtime's id, so that
	// its management API can refuse them. Default "mcpvisor".
	RequestMark string
	// AllowPrivateOAuthHosts lets a remote server's OAuth endpoints be on
	// loopback, private or link-local addresses other than the server's
	// own host (the IP literal in its URL, or any loopback address for
	// localhost). Default false: those are refused (see oauthTransport).
	AllowPrivateOAuthHosts bool

	// baseTransport, if set, is cloned instead of http.DefaultTransport
	// (tests: a client that trusts an httptest TLS server).
	baseTransport *http.Transport
	// answeredGrace, if set, replaces the const of that name (tests).
	answeredGrace time.Duration
	// LookupEnv gives the values of the references in the server's config
	// (${VAR}), expanded at the start of each dial: only there, so the
	// config everyone else holds keeps its references. Nil: os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// Procs accounts for a stdio server's processes under the server's
	// name and marks them, so that those that leave the process group are
	// killed at stop too. Nil: only the process group is killed.
	Procs *procs.Tracker
	// Propagator, if set, writes the W3C trace context of each tool
	// call's, resource read's and prompt get's ctx into its request
	// _meta (traceparent, tracestate; baggage only if the host opted in). Nil: nothing is added.
	Propagator propagation.TextMapPropagator
}

// dialResult is what the connecting goroutine hands to Dial.
type dialResult struct {
	cs    *mcp.ClientSession
	tools []*mcp.Tool
	err   error
}

// Options that must be set, missing (a bug in the caller).
var (
	errGraceUnset  = errors.New("mcpconn.Options.Grace must be set")
	errClientUnset = errors.New("mcpconn.Options.Client must be set")
)

// Dial starts the server, initializes the session and lists its tools, all
// within the server's connect_timeout_seconds (Server.ConnectTimeout). It returns as soon as that limit or
// ctx ends, without waiting for a stubborn process to die: the cleanup runs
// through opts.Go, and leaves no process behind.
//
// The server's references are expanded first, from opts.LookupEnv; one
// that cannot be (an unset variable without a default) fails the dial
// with a *config.FieldError naming the field and the variable, before
// anything starts.
func Dial(ctx context.Context, opts Options) (*Conn, error) {
	srv, err := opts.Server.Expand(opts.LookupEnv)
	if err != nil {
		// The error names fields and shaped variables only, but a value
		// that failed validation after expanding may be quoted (a cwd
		// is, and its variable may be a header's token too): scrub it
		// with the unexpanded server's secrets (a name pasted inside
		// ${…} among them) and the expanded values of its secret
		// fields, in every form the connection's scrubber knows. It
		// stays a *config.FieldError for the caller's errors.As.
		err = scrubFieldError(redact.New(opts.Server.ExpandedSecrets(opts.LookupEnv)...), err)
		return nil, fmt.Errorf("connecting %q: %w", opts.Server.Name, err)
	}
	// From here on everything (the process, headers, auth, the scrubber
	// of every output) sees the expanded values.
	opts.Server = srv
	// Defaults are resolved once, in runtime.Options: a zero here is the
	// caller's bug, said at once rather than covered by a second default.
	if opts.Grace <= 0 {
		return nil, fmt.Errorf("dialing %q: %w", srv.Name, errGraceUnset)
	}
	if opts.Client == nil {
		return nil, fmt.Errorf("dialing %q: %w", srv.Name, errClientUnset)
	}
	if opts.Go == nil {
		opts.Go = func(f func()) { go f() }
	}
	if opts.Emit == nil {
		opts.Emit = func(events.Event) {}
	}
	if opts.Clock == nil {
		opts.Clock = clockwork.NewRealClock()
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	tail := opts.Tail
	if tail == nil {
		tail = &Tail{}
	}
	// One scrubber for everything this connection lets out; it learns the
	// tokens obtained while the connection lives.
	scrub := redact.New(srv.Secrets()...)
	logger = redact.Logger(logger, scrub)
	opts.Logger = logger
	tailMark := tail.mark()
	stderr := newStderrWriter(logger, opts.Emit, srv.Name, tail, scrub)
	// What the server prints until it is connected is its status detail
	// (an npx download says what it fetches).
	stderr.startConnect(newStartingOutput(opts.Clock, opts.Emit, srv.Name))
	defer stderr.endConnect()
	listens := newListenTracker()
	var (
		proc      *stdioTransport
		tap       *wireTap
		rem       *remoteParts
		transport mcp.Transport = opts.Transport
	)
	owner := ctx // ends when the connection's owner stops
	ctx, deadline, cancel := withDialDeadline(ctx, opts.Clock, srv.ConnectTimeout())
	defer cancel()
	var (
		live   atomic.Pointer[Conn]
		authMu sync.Mutex
		failed error // why the dial failed, where the SDK may not say (login, refresh, answer too large, other origin)
	)
	// A login that fails during the dial makes the dial's error one that
	// waits for the user; one that fails later (a step-up) fails its call
	// only. A refused refresh, or an answer over its size limit, ends the
	// connection either way (fatal), with that error as the reason.
	setFailed := func(err error) {
		authMu.Lock()
		if failed == nil {
			failed = err
		}
		authMu.Unlock()
	}
	fatal := func(err error) {
		setFailed(err)
		if c := live.Load(); c != nil {
			c.endWith(err)
		}
	}
	login := func(ctx context.Context, req oauthflow.LoginRequest) (*auth.AuthorizationResult, error) {
		if opts.Login == nil {
			if req.Listener != nil {
				req.Listener.Close()
			}
			return nil, fmt.Errorf("%w: no way to open a browser", oauthflow.ErrNeedsReauth)
		}
		deadline.pause()
		defer deadline.resume()
		res, err := opts.Login(ctx, req)
		if err != nil && ctx.Err() == nil && live.Load() == nil {
			setFailed(err)
		}
		return res, err
	}
	switch {
	case transport != nil:
	case srv.Type == config.TypeLocal:
		if err := checkCwd(srv); err != nil {
			// It quotes the expanded cwd, whose variables may be a
			// secret field's too.
			return nil, fmt.Errorf("connecting %q: %w", srv.Name, scrubFieldError(scrub, err))
		}
		proc = newStdioTransport(srv.Command, srv.Cwd, srv.Env, stderr, opts.Grace, opts.Go, opts.Procs.Begin(srv.Name))
		transport = proc
	default:
		var err error
		if rem, err = remoteTransport(owner, opts, scrub, login, fatal, listens); err != nil {
			return nil, scrubError(scrub, fmt.Errorf("connecting %q: %w", srv.Name, err))
		}
		transport = rem.transport
	}
	var httpConns *http.Transport
	closeAuth, cut := func() {}, func() {}
	if rem != nil {
		httpConns, closeAuth, cut = rem.conns, rem.closeAuth, rem.cut
	}
	// A remote transport keeps the context it connected with for its
	// streams (the SSE GET lives as long as the session): give it one that
	// lasts until the Conn closes or the dial is abandoned, not the dial's.
	life, endLife := context.WithCancel(context.Background())
	if httpConns != nil {
		transport = lifetimeTransport{inner: transport, ctx: life}
	}
	// The SDK's HTTP connections carry unexported hooks a wrapper would
	// hide, so only stdio and injected transports get the wire tap.
	if httpConns == nil {
		tap = newWireTap()
		transport = connTransport{inner: transport, wrap: func(c mcp.Connection) mcp.Connection {
			tap.Connection = c
			return listenConn{Connection: tap, tracker: listens}
		}}
	}

	progress := newProgressRouter(opts.Clock, scrub, logger)
	var wants func(string) bool
	if subs := opts.Features.Subscriptions; subs != nil {
		wants = subs.Wants
	}
	updates := newUpdateThrottle(opts.Clock, opts.Emit, wants)
	client := mcp.NewClient(opts.Client, clientOptions(opts.Features, srv.Name, opts.Emit, updates, logger, progress, scrub, tail))
	heard := newHeartbeat()
	client.AddSendingMiddleware(probeMiddleware, heard.sending)
	client.AddReceivingMiddleware(heard.receiving)
	if len(opts.Features.Roots) > 0 {
		client.AddRoots(opts.Features.Roots...)
	}
	if opts.Features.ListRoots != nil {
		client.AddReceivingMiddleware(rootsMiddleware(opts.Features.ListRoots))
	}
	results := make(chan dialResult, 1)
	opts.Go(func() {
		// A pinned protocol_version is the version asked for; empty asks
		// for the newest the SDK supports.
		cs, err := client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: srv.ProtocolVersion})
		var list []*mcp.Tool
		if err == nil {
			list, err = listTools(ctx, cs)
		}
		if err == nil {
			enableServerLogs(ctx, cs, logger)
			if watch := opts.Features.WatchRoots; watch != nil && cs.InitializeResult().ProtocolVersion < noRootsChangedProtocol {
				watch(func() { notifyRootsChanged(client, opts.Features.Roots) })
			}
		}
		results <- dialResult{cs: cs, tools: list, err: err}
	})

	fail := func(err error) (*Conn, error) {
		updates.close()
		stderr.flush()
		closeAuth()
		authMu.Lock()
		if failed != nil && !errors.Is(err, oauthflow.ErrNeedsReauth) {
			err = fmt.Errorf("%w: %w", failed, err)
		}
		authMu.Unlock()
		return nil, scrubError(scrub, dialError(ctx, srv, err, tail, tailMark))
	}
	// Once the dial is abandoned (or fails), the process is stopped at
	// once, or never started if the connect goroutine has not got that far.
	select {
	case r := <-results:
		if r.err == nil && ctx.Err() == nil {
			deadline.finish()
			c := newConn(srv, opts, r, proc, stderr, scrub, logger)
			c.progress, c.heard = progress, heard
			c.logs = perCallLogLevel(r.cs.InitializeResult())
			c.tap, c.httpConns, c.endLife, c.closeAuth, c.cut = tap, httpConns, endLife, closeAuth, cut
			c.listens, c.reopen, c.updates = listens, newReopener(r.cs, opts.Features.Subscriptions, logger, srv.Timeout()), updates
			listens.attach(c.reopen.ended)
			// After the dial, never inside it: a server slow to answer
			// a subscribe must not fail the session (see resubscribeAll).
			c.reopen.resubscribeAll()
			live.Store(c)
			authMu.Lock()
			err := failed
			authMu.Unlock()
			if err != nil { // refused while the dial completed
				c.endWith(err)
			}
			// The keepalive before the watcher, which stops it (a
			// transport gone already); a stop first would do as well.
			c.startKeepAlive(opts.KeepAlive)
			go c.watch()
			return c, nil
		}
		if r.err == nil { // it succeeded just as the dial was abandoned
			r.err = ctx.Err()
		}
		proc.stopAsync()
		// A server that failed by itself has usually exited already: give
		// its last stderr lines a moment to arrive for the error message.
		proc.waitStopped(min(opts.Grace, 500*time.Millisecond))
		endLife()
		opts.Go(func() { abandon(r, proc, opts.Grace); closeIdle(httpConns) })
		return fail(r.err)
	case <-ctx.Done():
		proc.stopAsync()
		endLife()
		opts.Go(func() { abandon(<-results, proc, opts.Grace); closeIdle(httpConns) })
		return fail(context.Cause(ctx))
	}
}

func newConn(srv config.Server, opts Options, r dialResult, proc *stdioTransport, stderr *stderrWriter, scrub *redact.Scrubber, logger *slog.Logger) *Conn {
	c := &Conn{
		name:    srv.Name,
		timeout: srv.Timeout(),
		maxCall: srv.MaxCallDuration(),
		// Requests run on real time, as they always did: the owner's clock
		// is for lifecycle timers, and a test that holds it still must not
		// hold every request of a live session with it.
		clock:    clockwork.NewRealClock(),
		grace:    opts.Grace,
		logger:   logger,
		scrub:    scrub,
		cs:       r.cs,
		proc:     proc,
		stderr:   stderr,
		tools:    r.tools,
		limit:    newLimiter(srv.MaxConcurrentCalls),
		inflight: map[uint64]*requestDeadline{},
		done:     make(chan struct{}),
		kaDone:   make(chan struct{}),
		goFn:     opts.Go,

		propagator: opts.Propagator,
	}
	c.kaCtx, c.kaCancel = context.WithCancel(context.Background())
	return c
}

// abandon releases what a dial produced after nobody wants it any more.
func abandon(r dialResult, proc *stdioTransport, grace time.Duration) {
	proc.stop()
	if r.cs != nil {
		closeSession(r.cs, grace)
	}
}

func listTools(ctx context.Context, cs *mcp.ClientSession) ([]*mcp.Tool, error) {
	var out []*mcp.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("listing tools: %w", err)
		}
		out = append(out, t)
	}
	return out, nil
}

// connectLimit names the bound of a connect in its error:
// "connect_timeout_seconds=120", or, when the entry leaves it out,
// "connect_timeout_seconds=30 (timeout_seconds)".
func connectLimit(srv config.Server) string {
	s := "connect_timeout_seconds=" + strconv.Itoa(int(srv.ConnectTimeout()/time.Second))
	if srv.ConnectTimeoutSeconds <= 0 {
		s += " (timeout_seconds)"
	}
	return s
}

// dialError makes a failed dial readable: a timeout says which limit it hit
// (and stays errors.Is context.DeadlineExceeded whatever the SDK reported),
// garbage on stdout is named as such, and a process that died says what it
// printed last.
func dialError(ctx context.Context, srv config.Server, err error, tail *Tail, tailMark uint64) error {
	switch {
	case errors.Is(context.Cause(ctx), context.DeadlineExceeded):
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("no answer within %s: %w", connectLimit(srv), err)
		} else {
			err = fmt.Errorf("no answer within %s: %w (%w)", connectLimit(srv), context.DeadlineExceeded, err)
		}
	case strings.Contains(err.Error(), "invalid character"):
		// The SDK flattens the JSON syntax error into text.
		err = fmt.Errorf("the server wrote something that is not JSON-RPC to stdout (MCP stdio servers must log to stderr): %w", err)
	}
	if line, ok := tail.lastSince(tailMark); ok { // only this attempt's output
		err = fmt.Errorf("%w (last stderr line: %q)", err, line)
	}
	return fmt.Errorf("connecting %q: %w", srv.Name, err)
}

// scrubFieldError returns err, the error of [config.Server.Expand] or of
// checkCwd, with scrub's secrets removed from its text; a
// *config.FieldError stays one (with its message scrubbed), so the caller
// still tells invalid_config by errors.As.
func scrubFieldError(scrub *redact.Scrubber, err error) error {
	var fe *config.FieldError
	if errors.As(err, &fe) {
		c := *fe
		c.Server = scrub.ErrorString(c.Server)
		c.Message = scrub.ErrorString(c.Message)
		return &c
	}
	return scrub.Error(err)
}
