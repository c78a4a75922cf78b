package runtime

import (
	"context"
	"fmt"
	"log/slog"
	"path"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/events"
)

// The gateway (X1): the registry served as one MCP server. MCPServer
// builds a go-sdk *mcp.Server whose tools, prompts, resources and
// resource templates are the runtime's, and keeps it in step with the
// registry; serve it on any go-sdk transport (stdio, Streamable HTTP
// through MCPHandler, in-memory). Its handlers call the runtime (CallTool,
// GetPrompt, ReadResource), so every call gets the runtime's supervision,
// timeouts, filters, caps and scrubbing, and many clients share the
// upstream sessions.

// MCPServerOptions configure one gateway server.
type MCPServerOptions struct {
	// Name and Version are the implementation the server announces in
	// initialize; defaults "mcpvisor" and "dev".
	Name, Version string
	// Instructions, when set, is the server's instructions text.
	Instructions string
	// Tools decides which tools the server's clients see and may call, by
	// registry name ("{server}__{tool}"): Allow and Deny are globs as in
	// a server's tools filter (config.ToolFilter: "*" matches any run of
	// characters, deny wins, an empty Allow allows every tool). A tool
	// left out is not listed, and a call of it fails as a call of an
	// unknown tool does. Prompts are filtered by their registry names the
	// same way (a prompt left out is not listed, got or completed). A
	// server's resources, resource templates, subscriptions, template
	// completions and log lines reach clients only when the filter allows
	// the bare prefix "{server}__": Allow "a__*" allows it for server a,
	// Deny "ex__*" hides server ex's, Deny "*__delete_*" hides no
	// server's (an Allow that names tools only, "*__read_*", hides every
	// server's).
	Tools GatewayFilter
	// ParkTimeout is how long a call of a client on protocol 2026-07-28
	// that the gateway answered input-required (the server asked for
	// sampling, elicitation or roots) waits for the client's retry before
	// the upstream call is cancelled: the client's time to answer. 0:
	// DefaultParkTimeout (60 s); the server's call timeout bounds the
	// call as a whole in any case.
	ParkTimeout time.Duration
	// StartupWait bounds how long the gateway's list requests
	// (tools/list, prompts/list, resources/list, resources/templates/list)
	// and a tools/call of a name it does not serve (yet) wait, while the
	// runtime's startup has not settled: until every server that was in
	// its first connection attempt when MCPServer was called has left it
	// (ready with its tools registered, failed, needs login, disabled,
	// removed...) and the resources of the ready ones are listed, or until
	// StartupWait has passed since MCPServer, whichever comes first; a
	// request's own context ends its wait too. A client that lists once,
	// as soon as it connected, so sees the tools and resources of every
	// server that starts in time (prompts, which a server's actor lists
	// after the server is ready, may follow with list_changed). initialize
	// and ping never wait, nor anything once startup settled. 0:
	// DefaultGatewayStartupWait; negative: no wait.
	StartupWait time.Duration
	// Logger gets what the gateway skips (a tool the SDK would refuse, a
	// listing that failed); nil: the runtime's logger.
	Logger *slog.Logger
}

// GatewayFilter is an allow/deny list of registry-name globs.
type GatewayFilter struct {
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
}

// Validate reports a glob of f that does not parse (or is empty), as
// MCPServer would: a command line can check its filter flags before it
// starts the runtime.
func (f GatewayFilter) Validate() error {
	for _, list := range [][]string{f.Allow, f.Deny} {
		for _, p := range list {
			if _, err := path.Match(p, ""); err != nil || p == "" {
				return fmt.Errorf("gateway tool filter: bad glob %q", p)
			}
		}
	}
	return nil
}

func (f GatewayFilter) allows(name string) bool {
	return config.ToolFilter{Allow: f.Allow, Deny: f.Deny}.Allows(name)
}

// hidesAll reports whether no registry name starting "server__" can
// pass f, whatever the server's tools are: no allow glob can match such
// a name (its literal start and the prefix disagree), or a deny glob is
// a literal start of the prefix and "*". Conservative: false when unsure.
func (f GatewayFilter) hidesAll(server string) bool {
	prefix := server + "__"
	for _, p := range f.Deny {
		if lit, rest := globLiteral(p); rest == "*" && strings.HasPrefix(prefix, lit) {
			return true
		}
	}
	if len(f.Allow) == 0 {
		return false
	}
	for _, p := range f.Allow {
		if lit, _ := globLiteral(p); strings.HasPrefix(prefix, lit) || strings.HasPrefix(lit, prefix) {
			return false
		}
	}
	return true
}

// globLiteral splits glob p at its first special character: the literal
// start and the rest.
func globLiteral(p string) (string, string) {
	i := strings.IndexAny(p, `*?[\`)
	if i < 0 {
		return p, ""
	}
	return p[:i], p[i:]
}

// MCPServer returns an MCP server that serves the registry: every tool
// the filter allows under its registry name with all its metadata (title,
// annotations, input and output schema, icons, _meta), every prompt the
// filter allows under its registry name, every resource and resource
// template of every ready server the filter shows (see GatewayURI for the
// URIs, and MCPServerOptions.Tools for the filter). It follows the registry until
// ctx ends or the runtime shuts down: each change adds or removes what
// changed, and the SDK tells every connected client with one
// notifications/*/list_changed per list for a burst of changes (it
// batches them 10 ms apart).
//
// A tool call runs Runtime.CallTool under the client's request context (a
// client's notifications/cancelled cancels the upstream call); the
// server's progress reports reach the client under the client's own
// progress token, when it sent one. The result is the server's: every
// content block, structured content, isError and _meta, except that the
// runtime's checks apply (an output schema mismatch is an error result
// saying so; a result over the server's max_output_bytes or
// max_media_bytes is the runtime's capped one). A call the runtime cannot
// make (server not ready, timeout, session lost) is an isError result
// with the runtime's error text; an unknown or filtered tool is a
// JSON-RPC error. Sampling, elicitation and roots a server asks during a
// call go to the calling client when it declared the capability (see
// forwarder for the routing and its limits), else to the Options
// handlers; a client on protocol 2026-07-28 is asked through the
// gateway's input-required answers to its call (see parkedCall).
//
// A client may subscribe to any resource the server serves
// (resources/subscribe, or a subscriptions/listen stream): the server of
// the resource is subscribed once however many clients hold the URI, each
// of them gets its updates under the URI it subscribed with, and the
// last unsubscribe or session end unsubscribes it; a client session holds
// at most MaxGatewaySubscriptionsPerSession.
//
// With Options.ToolSearch on (deferred tool search), the server lists
// what Runtime.ModelTools hands a model, the filter applied:
// search_tools and the pinned tools the filter allows. Every other tool
// the filter allows stays callable by its registry name (clients learn
// of them from search_tools, whose answer is the runtime's own and never
// holds a tool the filter leaves out), and list_changed is sent when
// that listed set changes (a pinned tool added, changed or gone), not
// for the other tools. search_tools itself is not subject to the filter.
// The gateway follows the runtime's option; there is no per-server
// override (a server of its own could not offer search_tools on a
// runtime without the mode, nor pins of its own).
//
// While the runtime's startup has not settled, the list requests and a
// call of a tool not served yet wait for it, for at most
// MCPServerOptions.StartupWait (see there).
//
// It fails on a filter glob that does not parse, and with
// ErrShuttingDown once Shutdown began. Each call builds a server of its
// own (its own filter), all sharing the runtime's upstream sessions.
func (r *Runtime) MCPServer(ctx context.Context, opts MCPServerOptions) (*mcp.Server, error) {
	m, err := r.serveMirror(ctx, opts)
	if err != nil {
		return nil, err
	}
	return m.srv, nil
}

// serveMirror is MCPServer, answering the mirror (whose state tests read).
func (r *Runtime) serveMirror(ctx context.Context, opts MCPServerOptions) (*mirror, error) {
	if err := opts.Tools.Validate(); err != nil {
		return nil, err
	}
	if opts.Name == "" {
		opts.Name = "mcpvisor"
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	if opts.Logger == nil {
		opts.Logger = r.opts.Logger
	}
	if opts.StartupWait == 0 {
		opts.StartupWait = DefaultGatewayStartupWait
	}
	m := newMirror(r, opts)
	m.parked = newParkedCalls(ctx, opts.ParkTimeout)
	m.srv = mcp.NewServer(&mcp.Implementation{Name: opts.Name, Version: opts.Version}, &mcp.ServerOptions{
		Instructions: opts.Instructions,
		Logger:       slog.New(levelFilter{opts.Logger.Handler(), slog.LevelWarn}).With("component", "gateway"),
		// Every list is announced even while empty, so a client that
		// connects before the first server is ready still follows it.
		Capabilities: &mcp.ServerCapabilities{
			Tools:       &mcp.ToolCapabilities{ListChanged: true},
			Prompts:     &mcp.PromptCapabilities{ListChanged: true},
			Resources:   &mcp.ResourceCapabilities{ListChanged: true, Subscribe: true},
			Completions: &mcp.CompletionCapabilities{},
			Logging:     &mcp.LoggingCapabilities{},
		},
		CompletionHandler:  m.complete,
		SubscribeHandler:   m.subscribe,
		UnsubscribeHandler: m.unsubscribe,
		// A client's roots may be what servers get (see forwarder).
		RootsListChangedHandler: func(_ context.Context, req *mcp.RootsListChangedRequest) { r.fwd.rootsChanged(req.Session) },
		InitializedHandler:      func(_ context.Context, req *mcp.InitializedRequest) { r.fwd.initialized(req.Session) },
	})
	if r.opts.ToolSearch.Enabled {
		m.srv.AddReceivingMiddleware(m.callUnlisted)
	}
	// Outermost: a call of a tool not served yet waits before
	// callUnlisted or the SDK answers it.
	m.srv.AddReceivingMiddleware(m.awaitStartup)
	// Under workMu until work.Go: Shutdown's work.Wait cannot begin in
	// between (what runs here is quick and waits for nothing).
	r.workMu.Lock()
	defer r.workMu.Unlock()
	select {
	case <-r.stopWatch:
		m.parked.stop()
		return nil, fmt.Errorf("serving the registry: %w", ErrShuttingDown)
	default:
	}
	// The subscriptions are taken before the first sync, so no change
	// falls between the two.
	toolChanges := r.registry.Subscribe()
	evs := r.bus.Subscribe(events.SubscribeOptions{Buffer: 1024})
	m.syncTools()
	m.syncPrompts()
	m.relistReady()
	m.initStartup(opts.StartupWait)
	r.fwd.serve(m.srv, m.serverVisible)
	r.work.Go(func() {
		defer r.fwd.unserve(m.srv)
		m.run(ctx, toolChanges, evs)
	})
	return m, nil
}
