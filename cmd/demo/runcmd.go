package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	goruntime "runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/openprogram/mcpvisor/internal/netaddr"
	"github.com/openprogram/mcpvisor/runtime"
)

// Bounds of the steps of stopping: the runtime gets runtimeShutdownGrace
// to stop every server, and in-flight API requests httpShutdownGrace
// after that to finish before their connections are closed.
const (
	httpShutdownGrace    = 5 * time.Second
	runtimeShutdownGrace = 30 * time.Second
)

// runServe runs the runtime on a state dir and serves its management API
// until SIGINT or SIGTERM; SIGHUP reloads the config file.
func runServe(args []string) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	stateDir := fs.String("state-dir", "", "directory holding mcp_servers.json (required)")
	listen := fs.String("listen", "127.0.0.1:7077", "`address` of the management API (port 0: any free port)")
	verbose := fs.Bool("v", false, "log at debug level")
	debug := fs.Bool("debug", false, "mount POST /debug/actors/kill to inject actor failures (chaos tests, demos)")
	apps := fs.Bool("apps", false, "advertise MCP Apps to the servers: the host behind the API renders their ui:// resources (runtime.Options.RendersApps)")
	startup := fs.Int("startup-concurrency", 1, "how many servers may connect at once during startup and reloads, turns in file order (runtime.Options.StartupConcurrency)")
	toolSearch := fs.Bool("tool-search", false, "deferred tool mode: GET /api/mcp/tools/model is search_tools plus the pinned tools (runtime.Options.ToolSearch)")
	pin := fs.String("pin", "", "comma-separated registry names or globs of the tools -tool-search hands the model beside search_tools")
	keepAlive := fs.Duration("keepalive", 0, "probe each ready server every `interval` and restart one that stops answering (0: the default 30s; negative: off; runtime.Options.KeepAlive)")
	var projects stringList
	fs.Var(&projects, "project", "a project `folder` whose hosts' project files (.mcp.json, .cursor/mcp.json, .vscode/mcp.json, ...) the catalog reads; repeatable (runtime.Options.Projects)")
	home := fs.String("home", "", "the home `directory` the catalog reads the other hosts' files under (default $HOME; runtime.Options.Home)")
	otelMode := fs.String("otel", "", "OpenTelemetry `exporters`, comma-separated: stdout writes one JSON object per span or metric batch to stdout (logs stay on stderr); prometheus serves the metrics at GET /metrics")
	mcpListen := fs.String("mcp-listen", "", "also serve the registry as one MCP server over Streamable HTTP at http://`ADDR`/mcp (loopback unless -mcp-token-file is set)")
	mcpTokenFile := fs.String("mcp-token-file", "", "`file` whose first line is the bearer token -mcp-listen requires of every client (required off loopback)")
	mcpAllow := fs.String("mcp-allow", "", "comma-separated registry-name `globs` of the tools -mcp-listen's clients may see and call (default: all)")
	mcpDeny := fs.String("mcp-deny", "", "comma-separated registry-name `globs` of the tools -mcp-listen's clients may not see or call (deny wins)")
	mcpStartupWait := fs.Duration("mcp-startup-wait", runtime.DefaultGatewayStartupWait, "how long -mcp-listen's list requests wait, at startup, for the servers' first connects (runtime.MCPServerOptions.StartupWait; 0 or negative: no wait)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if err := checkRuntimeFlags(*stateDir, *pin, *toolSearch, *startup); err != nil {
		fmt.Fprintln(os.Stderr, "demo run:", err)
		return 2
	}
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	// The subreaper is Linux's (elsewhere asking for it only logs a warning).
	opts := runtime.Options{StateDir: *stateDir, Debug: *debug, RendersApps: *apps, Subreaper: goruntime.GOOS == "linux",
		StartupConcurrency: *startup, ToolSearch: runtime.ToolSearch{Enabled: *toolSearch, Pinned: pinList(*pin)},
		KeepAlive: *keepAlive, Home: *home, Projects: projects}
	logger := newLogger(os.Stderr, level)
	if (*mcpTokenFile != "" || *mcpAllow != "" || *mcpDeny != "" || *mcpStartupWait != runtime.DefaultGatewayStartupWait) && *mcpListen == "" {
		fmt.Fprintln(os.Stderr, "demo run: -mcp-token-file, -mcp-allow, -mcp-deny and -mcp-startup-wait need -mcp-listen")
		return 2
	}
	// The filter is checked before the runtime starts any server.
	mcpTools := runtime.GatewayFilter{Allow: pinList(*mcpAllow), Deny: pinList(*mcpDeny)}
	if err := mcpTools.Validate(); err != nil {
		fmt.Fprintf(os.Stderr, "demo run: -mcp-allow, -mcp-deny: %v\n", err)
		return 2
	}
	stdout := &lineWriter{w: os.Stdout}
	otel, err := withOTel(*otelMode, stdout, &opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "demo run:", err)
		return 2
	}
	// The gateway's listener is bound before the runtime starts, so that
	// a bad address fails at once.
	var gateway *mcpListener
	if *mcpListen != "" {
		if gateway, err = listenMCP(*mcpListen, *mcpTokenFile); err != nil {
			fmt.Fprintf(os.Stderr, "demo run: %v\n", err)
			_ = otel.stop(context.Background())
			return 2
		}
		gateway.tools = mcpTools
		gateway.startupWait = noWaitIfZero(*mcpStartupWait)
	}
	code := serveAPI(stdout, logger, opts, *listen, otel, gateway)
	ctx, cancel := context.WithTimeout(context.Background(), httpShutdownGrace)
	defer cancel()
	if err := otel.stop(ctx); err != nil {
		logger.Error("flushing OpenTelemetry", "error", err)
		code = max(code, 1)
	}
	return code
}

// checkRuntimeFlags checks the runtime flags demo run and demo gateway
// share, before anything starts.
func checkRuntimeFlags(stateDir, pin string, toolSearch bool, startup int) error {
	switch {
	case startup < 0:
		return fmt.Errorf("-startup-concurrency must not be negative, got %d", startup)
	case stateDir == "":
		return errors.New("-state-dir is required")
	case pin != "" && !toolSearch:
		return errors.New("-pin needs -tool-search (without it the model and the gateway's clients get every tool)")
	}
	return nil
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, ",") }

func (l *stringList) Set(v string) error {
	*l = append(*l, v)
	return nil
}

// pinList splits the -pin flag into its globs, blanks dropped.
func pinList(flag string) []string {
	var out []string
	for p := range strings.SplitSeq(flag, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// serveAPI runs the runtime of opts and its management API on listen
// until a signal stops it; metrics, if set, serves GET /metrics beside it,
// and gateway, when set, serves the registry as one MCP server (its
// listener already bound, so a bad address fails before the runtime
// starts).
func serveAPI(stdout io.Writer, logger *slog.Logger, opts runtime.Options, listen string, otel otelSetup, gateway *mcpListener) int {
	// Signals are caught from the start, so that one arriving while the
	// runtime starts is not lost (nor kills the process half started).
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(signals)

	ln, err := net.Listen("tcp", listen)
	if err != nil {
		if gateway != nil {
			gateway.ln.Close()
		}
		logger.Error("listening", "error", err)
		return 1
	}
	if !isLoopback(ln.Addr()) {
		logger.Warn("the management API has no authentication and answers only requests addressed to localhost; listen on a loopback address",
			"listen", ln.Addr().String())
	}
	opts.Logger = logger
	rt, err := runtime.Start(context.Background(), opts)
	if err != nil {
		ln.Close()
		if gateway != nil {
			gateway.ln.Close()
		}
		logger.Error("starting runtime", "error", err)
		return 1
	}
	handler := managementHandler(rt)
	if otel.metrics != nil {
		mux := http.NewServeMux()
		mux.Handle("/", handler)
		mux.Handle("/metrics", otel.metrics)
		handler = mux
	}
	srv := newAPIServer(handler, logger, apiTimeouts{})
	stopGateway := func() {}
	if gateway != nil {
		if stopGateway, err = gateway.serve(rt, logger); err != nil {
			logger.Error("serving the gateway", "error", err)
			stopGateway = func() {}
		}
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Fprintf(stdout, "listening on http://%s\n", ln.Addr())
	logger.Info("runtime started; stop with Ctrl-C, reload the config with SIGHUP", "state_dir", opts.StateDir, "listen", ln.Addr().String())

	// Reloads run beside the signal loop, so that a SIGTERM during a slow
	// one is acted on at once; stopping cancels them.
	reloadCtx, cancelReloads := context.WithCancel(context.Background())
	var reloads sync.WaitGroup
	code := 0
loop:
	for {
		select {
		case sig := <-signals:
			if sig != syscall.SIGHUP {
				logger.Info("shutting down", "signal", sig.String())
				break loop
			}
			reloads.Go(func() {
				res, err := rt.Reload(reloadCtx)
				if err != nil {
					logger.Error("reloading the config", "error", err)
					return
				}
				logger.Info("config reloaded", "added", res.Added, "removed", res.Removed, "restarted", res.Restarted)
			})
		case err := <-served:
			logger.Error("serving the management API", "error", err)
			code = 1
			break loop
		}
	}

	// The runtime stops first, so that API requests waiting on a server
	// (a PATCH's restart, a call) are answered "shutting down" at once
	// instead of holding up the HTTP shutdown. The HTTP server stops
	// taking requests at once, but its grace counts from the runtime's
	// stop: an open event stream ends only then (after the last event).
	if otel.flush != nil {
		// One metric batch while the runtime's servers gauge is still
		// registered: its Shutdown unregisters it, so the batch flushed
		// after it has the counters but no mcpvisor.servers.
		fctx, fcancel := context.WithTimeout(context.Background(), httpShutdownGrace)
		if err := otel.flush(fctx); err != nil {
			logger.Warn("flushing the metrics before the shutdown", "error", err)
		}
		fcancel()
	}
	rctx, rcancel := context.WithTimeout(context.Background(), runtimeShutdownGrace)
	defer rcancel()
	stopped := make(chan error, 1)
	go func() { stopped <- rt.Shutdown(rctx) }()
	hctx, hcancel := context.WithCancel(context.Background())
	defer hcancel()
	httpDone := make(chan error, 1)
	go func() { httpDone <- srv.Shutdown(hctx) }()
	stopErr := <-stopped
	stopGateway()
	grace := time.AfterFunc(httpShutdownGrace, hcancel)
	defer grace.Stop()
	if err := <-httpDone; err != nil {
		logger.Warn("API requests still running at shutdown; closing their connections", "error", err)
		srv.Close()
	}
	cancelReloads()
	reloads.Wait()
	if stopErr != nil {
		logger.Error("shutdown", "error", stopErr)
		return 1
	}
	return code
}

func isLoopback(addr net.Addr) bool {
	return netaddr.Loopback(addr.String())
}
