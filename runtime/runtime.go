// Package runtime is what an agent host embeds: it connects to every MCP
// server in <state_dir>/mcp_servers.json, keeps the sessions alive under an
// actor tree, and exposes every remote tool as a local one named
// "{server}__{tool}".
//
// # Quick start
//
//	rt, err := runtime.Start(ctx, runtime.Options{StateDir: dir, Logger: logger})
//	if err != nil { ... }
//	defer rt.Shutdown(context.Background())
//	for _, t := range rt.Tools() { ... offer t.Name, t.Description, t.InputSchema to the model ... }
//	res, err := rt.CallTool(ctx, "fs__read_file", map[string]any{"path": "/tmp/x"})
//
// A host with many tools sets Options.ToolSearch and offers rt.ModelTools()
// instead: a search_tools tool and the tools it pins, the model finding the
// others with SearchTools behind search_tools and calling them by name.
//
// Start returns at once: servers connect in the background, in file
// order, one after another (or Options.StartupConcurrency at once). Tools
// appear as their servers become ready; watch Registry().Subscribe() or
// poll Tools().
package runtime

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/actors"
	"github.com/openprogram/mcpvisor/actors/manager"
	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/binding"
	"github.com/openprogram/mcpvisor/internal/mcpconn"
	"github.com/openprogram/mcpvisor/internal/procs"
	"github.com/openprogram/mcpvisor/internal/telemetry"
	"github.com/openprogram/mcpvisor/internal/toolsearch"
	"github.com/openprogram/mcpvisor/prompts"
	"github.com/openprogram/mcpvisor/status"
	"github.com/openprogram/mcpvisor/tokenstore"
	"github.com/openprogram/mcpvisor/tools"
)

// Runtime is one running set of MCP servers. Its methods are safe for
// concurrent use. Two Runtimes in one process share nothing.
type Runtime struct {
	opts     Options
	store    config.Store
	registry *tools.Registry
	prompts  *prompts.Registry
	board    *status.Board
	bus      *events.Bus          // the one event stream; the board is its reducer
	tel      *telemetry.Telemetry // spans and metrics; nil without a provider (see telemetry.go)
	procs    *procs.Tracker
	gate     *requestGate // the limits of the requests servers send
	fwd      *forwarder   // routes those requests to gateway clients
	system   *actor.ActorSystem
	manager  *actor.PID
	work     sync.WaitGroup

	config atomic.Pointer[config.File] // the configured servers, published by the manager
	tails  actors.Tails                // each server's stderr tail, read by the board
	// bindings finds a server's current connection by name, for the
	// requests that name a server (resources, completions).
	bindings binding.Directory
	// subs are the hosts' resource subscriptions, which outlive every
	// session (each new one subscribes to them) and server actor.
	subs    subscriptionSet
	logDone chan struct{} // closed when the log subscriber ended

	managerDone  chan struct{}
	shutdownOnce sync.Once
	drained      chan struct{} // closed when Shutdown finished stopping everything
	stopWatch    chan struct{} // closed when Shutdown began
	// workMu makes a work.Go after Start (MCPServer's) and its check of
	// stopWatch one step against Shutdown's close of stopWatch, so no
	// work.Go comes after the work.Wait that follows the close.
	workMu  sync.Mutex
	failure atomic.Value // string: why the runtime stopped working
	id      string       // marks the runtime's outgoing requests (see refuseOwnRequests)
	// boot identifies this Runtime instance in event ids ("<boot>-<seq>"),
	// so that a subscriber resuming across a restart is told it missed
	// events instead of being handed another instance's.
	boot   string
	stream eventStream // the SSE route's timings and open streams (http_events.go)
	// search is the tool search index of the current registry, rebuilt
	// in the background on every change (toolsearch.go) once
	// searchWanted is closed (at Start with ToolSearch on, else by the
	// first search); searchBuilt is closed when it first holds the
	// registry.
	search       atomic.Pointer[toolsearch.Index]
	searchOnce   sync.Once
	searchWanted chan struct{}
	searchBuilt  chan struct{}
	apply        applyTuning // the timings of POST /api/mcp/catalog/apply (catalog_apply.go)
	// catalogReads admits one catalog read at a time (catalog.go);
	// catalogQueued counts the reads waiting for it.
	catalogReads  chan struct{}
	catalogQueued atomic.Int32
}

// managerStartTimeout bounds the wait for the manager's Started, which
// does no I/O; only a bug can make it take long.
const managerStartTimeout = 10 * time.Second

// Status is a snapshot of the runtime's servers.
type Status struct {
	// ConfigError says why the config file could not be used; the runtime
	// then runs with no servers and refuses to overwrite the file.
	ConfigError string `json:"config_error,omitempty"`
	// Error says why the runtime stopped working, if it did.
	Error string `json:"error,omitempty"`
	// Servers in config order.
	Servers []status.Server `json:"servers"`
}

// Start loads the config and starts connecting its enabled servers in the
// background. It returns without waiting for any server. A config file that
// does not parse is not an error: it is logged once and reported in
// Status, and the runtime runs with no servers. When ctx is cancelled the
// runtime shuts down by itself (Shutdown still waits for it).
func Start(ctx context.Context, opts Options) (*Runtime, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	opts.setDefaults()
	if err := opts.ToolSearch.setDefaults(); err != nil {
		return nil, err
	}
	r := &Runtime{
		opts:        opts,
		registry:    tools.NewRegistry(opts.Logger),
		prompts:     &prompts.Registry{},
		managerDone: make(chan struct{}),
		logDone:     make(chan struct{}),
		drained:     make(chan struct{}),
		stopWatch:   make(chan struct{}),
		id:          "mcpvisor-" + rand.Text()[:12],
		boot:        rand.Text()[:10],

		catalogReads: make(chan struct{}, 1),
		searchWanted: make(chan struct{}),
		searchBuilt:  make(chan struct{}),
	}
	r.subs.unsubscribe = r.unsubscribeCurrent
	r.search.Store(toolsearch.Build(nil))
	r.board = status.NewBoard(r.tails.Lines)
	// Before the telemetry: the servers gauge's callback reads the config,
	// and a host's reader may collect the moment it is registered.
	r.config.Store(&config.File{})
	r.tel = r.newTelemetry()
	r.bus = events.NewBus(&events.Options{Reducer: r.reducer(), Now: opts.clock.Now})
	// The log is one subscriber, from the first event on; Shutdown's
	// bus.Close ends it once it has logged what is left.
	go r.logEvents(r.bus.Subscribe(events.SubscribeOptions{Buffer: logSubBuffer}), r.logDone)
	r.store = config.Store{Dir: r.opts.stateDir}
	var err error
	r.procs, err = procs.New(procs.Options{Subreaper: opts.Subreaper})
	if err != nil {
		opts.Logger.Warn("cannot become a child subreaper; orphans of servers are reaped by init", "error", err)
	}
	file, err := r.store.Load()
	switch {
	case errors.Is(err, config.ErrUnparsable):
		r.bus.Emit(events.ConfigRejected{Error: err.Error()})
		file = nil
	case err != nil:
		r.bus.Close()
		<-r.logDone
		_ = r.tel.Close() // the host's MeterProvider keeps no callback of a runtime that never ran
		return nil, fmt.Errorf("loading config: %w", err)
	}
	tokens := tokenstore.Store{Dir: r.opts.stateDir, Lock: &sync.Mutex{}}
	r.warnOpenModes(file, tokens)

	actorLogger := slog.New(levelFilter{opts.Logger.Handler(), slog.LevelWarn}).With("component", "actors")
	r.system = actor.NewActorSystem(
		actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger { return actorLogger }),
		actor.WithDeadLetterRequestLogging(false),
		// Each dead-letter burst parks a timer goroutine for this long;
		// keep it short so a stopped runtime is quiet soon after.
		actor.WithDeadLetterThrottleInterval(100*time.Millisecond),
	)
	r.gate = newRequestGate(opts.ServerRequests, r.bus, opts.clock)
	gate := r.gate
	r.fwd = newForwarder(func(server string) *mcpconn.Conn {
		conn, _ := r.connOf(server, "")
		return conn
	})
	fwd := r.fwd
	sample := fwd.sampling(gate, sampler(opts.Sample))
	elicit := fwd.elicitation(gate, elicitor(opts.Elicit))
	deps := &actors.Deps{
		Logger:       opts.Logger,
		Registry:     r.registry,
		Prompts:      r.prompts,
		Bindings:     &r.bindings,
		Sample:       sample,
		Roots:        opts.roots(),
		RendersApps:  opts.RendersApps,
		Board:        r.board,
		Events:       r.bus,
		Tails:        &r.tails,
		Work:         &r.work,
		Grace:        opts.StopGrace,
		Restart:      opts.Restart,
		Client:       &mcp.Implementation{Name: opts.ClientName, Version: opts.ClientVersion},
		Transport:    opts.transport,
		Elicit:       elicit,
		Tokens:       tokens,
		OpenURL:      opts.OpenURL,
		LoginTimeout: opts.LoginTimeout,
		RequestMark:  r.id,
		Config:       &r.config,
		Procs:        r.procs,
		Propagator:   r.tel.Propagator(),
		Gone:         func(name string) { gate.forget(name); fwd.forget(name); r.subs.serverGone(name) },
		Freed:        func(name string) { gate.freed(name); r.subs.freed(name) },
		Clock:        opts.clock,
	}
	deps.AllowPrivateOAuthHosts = opts.AllowPrivateOAuthHosts
	deps.LookupEnv = opts.LookupEnv
	deps.KeepAlive = opts.keepAlive()
	deps.Subscriptions = r.subs.of
	deps.ListRoots = fwd.roots(gate, opts.roots())
	deps.WatchRoots = fwd.watchRoots
	ready := make(chan struct{})
	onReady := sync.OnceFunc(func() { close(ready) })
	props := manager.Props(manager.Options{Deps: deps, Store: r.store, File: file, Ready: onReady, Done: r.managerDone,
		StartupConcurrency: opts.StartupConcurrency}).
		Clone(actor.WithGuardian(actors.StopOnFailure{}))
	pid, err := r.system.Root.SpawnNamed(props, manager.Name)
	if err != nil {
		r.system.Shutdown()
		r.bus.Close()
		<-r.logDone
		_ = r.tel.Close()
		return nil, fmt.Errorf("spawning manager: %w", err)
	}
	r.manager = pid
	// The manager's Started only spawns actors (microseconds each); once it
	// is done every configured server shows in Status.
	select {
	case <-ready:
	case <-time.After(managerStartTimeout):
		stopCtx, cancel := context.WithTimeout(context.Background(), managerStartTimeout)
		defer cancel()
		_ = r.Shutdown(stopCtx)
		return nil, errors.New("starting: the manager actor did not start")
	}
	toolChanges := r.registry.Subscribe()
	r.work.Go(func() { r.indexTools(toolChanges) })
	go r.shutdownWhenDone(ctx)
	return r, nil
}

// shutdownWhenDone shuts the runtime down when Start's context ends, and
// reports a manager that died on its own (a bug: it is never restarted in
// place, because an in-place restart would re-run startup on a stale
// config and race Shutdown).
func (r *Runtime) shutdownWhenDone(ctx context.Context) {
	select {
	case <-ctx.Done():
		stopCtx, cancel := context.WithTimeout(context.Background(), r.opts.shutdownBound())
		defer cancel()
		if err := r.Shutdown(stopCtx); err != nil {
			r.opts.Logger.Error("shutdown after the runtime's context ended", "error", err)
		}
	case <-r.managerDone:
		select {
		case <-r.stopWatch:
		default:
			r.failure.Store(errManagerDied.Error())
			r.opts.Logger.Error(errManagerDied.Error())
		}
	case <-r.stopWatch:
	}
}

var errManagerDied = errors.New("the manager actor stopped unexpectedly; no server runs until the runtime is restarted")

// Tools returns the tools of every ready server that are for the model
// (tools.Tool.ForModel), sorted by name: what a host offers its model. The
// registry (Registry, GET /api/mcp/tools) holds every tool, those meant
// only for an MCP App included, and CallTool calls any of them.
func (r *Runtime) Tools() []tools.Tool {
	return slices.DeleteFunc(r.registry.List(), func(t tools.Tool) bool { return !t.ForModel() })
}

// Registry is the live tool registry, for hosts that subscribe to changes.
// It holds every tool, those only for an MCP App included: a host that
// offers its model tools from it keeps those for which
// tools.Tool.ForModel is true, as Tools does.
func (r *Runtime) Registry() *tools.Registry { return r.registry }

// CallTool calls a tool by its registry name, whether or not ModelTools
// lists it (and search_tools in the deferred mode, see ToolSearch). A
// tool whose server is not ready fails at once (tools.ErrNotReady); an
// unknown name fails with tools.ErrUnknownTool.
func (r *Runtime) CallTool(ctx context.Context, name string, args any) (tools.Result, error) {
	t, ok := r.registry.Get(name)
	if r.tel != nil {
		return r.tracedCall(ctx, name, &t, ok, args)
	}
	return r.execute(ctx, name, &t, ok, args)
}

// execute is CallTool once the registry was asked: t is the tool if known.
func (r *Runtime) execute(ctx context.Context, name string, t *tools.Tool, known bool, args any) (tools.Result, error) {
	switch {
	case known:
		return t.Execute(ctx, args)
	case name == SearchToolName && r.opts.ToolSearch.Enabled:
		return r.searchTool().Execute(ctx, args)
	}
	return tools.Result{}, r.unknownTool(name)
}

// unknownTool is the error of a call to a name the registry does not hold.
// When the name is that of a server waiting for a login (its tools are
// unregistered meanwhile), the error matches ErrNeedsLogin as well, so a
// host can send the user to log in instead of saying the tool is gone.
func (r *Runtime) unknownTool(name string) error {
	server := ""
	for _, srv := range r.config.Load().Servers {
		if strings.HasPrefix(name, srv.Name+"__") && len(srv.Name) > len(server) {
			server = srv.Name
		}
	}
	if st, ok := r.board.Get(server); ok && (st.State == status.NeedsAuth || st.State == status.Authorizing) {
		return fmt.Errorf("calling %q: %w: server %q %w", name, tools.ErrUnknownTool, server, errNeedsLoginState)
	}
	return fmt.Errorf("calling %q: %w", name, tools.ErrUnknownTool)
}

// Status reports every configured server. It never waits for an actor.
func (r *Runtime) Status() Status {
	failure, _ := r.failure.Load().(string)
	st := Status{Error: failure, ConfigError: r.board.ConfigError(), Servers: []status.Server{}}
	for _, srv := range r.config.Load().Servers {
		if s, ok := r.board.Get(srv.Name); ok {
			st.Servers = append(st.Servers, s)
		}
	}
	return st
}

// killWait bounds how long Shutdown waits, after SIGKILL, for killed
// processes to be gone (their parent or init reaps them).
const killWait = time.Second

// Shutdown unregisters every tool at once, stops every server (in-flight
// calls cancelled, stdin closed, SIGTERM and SIGKILL to each process group
// after the grace periods, then SIGKILL to every process that carries the
// server's mark) and waits until no process or goroutine of the runtime is
// left, or until ctx ends.
//
// When ctx ends first, Shutdown still leaves no process running: before it
// returns ctx's error it SIGKILLs every process group the runtime started
// that still exists and (on Linux) every process that carries one of the
// runtime's marks, whatever its group or session, and waits up to one more
// second for the kernel to remove them. A process that a connect starts
// after that is killed as soon as it started. What goes on in the
// background is only the actors and goroutines finishing (and reaping the
// killed processes); a later Shutdown can wait for it again.
func (r *Runtime) Shutdown(ctx context.Context) error {
	r.shutdownOnce.Do(func() {
		r.workMu.Lock()
		close(r.stopWatch)
		r.workMu.Unlock()
		r.subs.close()
		r.registry.Close() // from here on nothing registers
		r.prompts.Close()
		r.system.Root.Stop(r.manager)
		go func() {
			<-r.managerDone
			r.work.Wait()
			// Every stop killed its own; this sweeps up a process that
			// forked between a stop's scan and its kill.
			r.procs.KillAll(killWait)
			r.gate.close()
			r.system.Shutdown()
			r.bus.Close() // every subscriber reads what is left, then ErrClosed
			if err := r.tel.Close(); err != nil {
				r.opts.Logger.Warn("unregistering the servers gauge", "error", err)
			}
			<-r.logDone // so the log holds every line once Shutdown returned
			close(r.drained)
		}()
	})
	select {
	case <-r.drained:
		return nil
	case <-ctx.Done():
		r.procs.KillAll(killWait)
		return fmt.Errorf("shutting down: %w (every server process was killed; the runtime's goroutines are still stopping in the background)", ctx.Err())
	}
}
