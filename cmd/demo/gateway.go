package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	goruntime "runtime"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/runtime"
)

// runGateway runs the runtime on a state dir and serves its registry as
// one MCP server on stdin/stdout until stdin ends or SIGINT/SIGTERM.
// stdout is the protocol: every log goes to stderr.
func runGateway(args []string) int {
	fs := flag.NewFlagSet("gateway", flag.ContinueOnError)
	stateDir := fs.String("state-dir", "", "directory holding mcp_servers.json (required)")
	verbose := fs.Bool("v", false, "log at debug level")
	allow := fs.String("allow", "", "comma-separated registry-name globs of the tools clients may see and call (default: all)")
	deny := fs.String("deny", "", "comma-separated registry-name globs of the tools clients may not see or call (deny wins)")
	startup := fs.Int("startup-concurrency", 4, "how many servers may connect at once during startup (runtime.Options.StartupConcurrency)")
	toolSearch := fs.Bool("tool-search", false, "deferred tool mode: clients see search_tools plus the pinned tools and call the others by name (runtime.Options.ToolSearch)")
	pin := fs.String("pin", "", "comma-separated registry names or globs of the tools -tool-search lists beside search_tools")
	startupWait := fs.Duration("startup-wait", runtime.DefaultGatewayStartupWait, "how long list requests wait, at startup, for the servers' first connects (runtime.MCPServerOptions.StartupWait; 0 or negative: no wait)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if err := checkRuntimeFlags(*stateDir, *pin, *toolSearch, *startup); err != nil {
		fmt.Fprintln(os.Stderr, "demo gateway:", err)
		return 2
	}
	// The filter is checked before the runtime starts any server.
	filter := runtime.GatewayFilter{Allow: pinList(*allow), Deny: pinList(*deny)}
	if err := filter.Validate(); err != nil {
		fmt.Fprintf(os.Stderr, "demo gateway: -allow, -deny: %v\n", err)
		return 2
	}
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	logger := newLogger(os.Stderr, level)
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(signals)

	rt, err := runtime.Start(context.Background(), runtime.Options{StateDir: *stateDir, Logger: logger, Subreaper: goruntime.GOOS == "linux", StartupConcurrency: *startup,
		ToolSearch: runtime.ToolSearch{Enabled: *toolSearch, Pinned: pinList(*pin)}})
	if err != nil {
		logger.Error("starting runtime", "error", err)
		return 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	code := 0
	srv, err := rt.MCPServer(ctx, runtime.MCPServerOptions{Tools: filter,
		StartupWait: noWaitIfZero(*startupWait), Logger: logger})
	if err != nil {
		logger.Error("building the gateway", "error", err)
		code = 2
	} else {
		served := make(chan error, 1)
		go func() { served <- srv.Run(ctx, &mcp.StdioTransport{}) }()
		select {
		case sig := <-signals:
			logger.Info("shutting down", "signal", sig.String())
			cancel()
			<-served
		case err := <-served:
			if err != nil && !errors.Is(err, context.Canceled) {
				logger.Info("the client went away", "error", err)
			}
		}
	}
	cancel()
	sctx, scancel := context.WithTimeout(context.Background(), runtimeShutdownGrace)
	defer scancel()
	if err := rt.Shutdown(sctx); err != nil {
		logger.Error("shutdown", "error", err)
		return 1
	}
	return code
}

// mcpListener is the gateway over Streamable HTTP beside `demo run`'s
// management API (-mcp-listen, -mcp-token-file, -mcp-allow, -mcp-deny).
type mcpListener struct {
	ln    net.Listener
	token string
	tools runtime.GatewayFilter // -mcp-allow, -mcp-deny
	// startupWait is the gateway's MCPServerOptions.StartupWait
	// (-mcp-startup-wait).
	startupWait time.Duration
	// timeouts are the HTTP server's (zero fields: apiTimeouts' defaults;
	// Write is not used, see newGatewayHTTPServer).
	timeouts apiTimeouts
}

// listenMCP binds addr for the gateway. Off loopback it refuses to start
// without a token file; the token is the file's first line.
func listenMCP(addr, tokenFile string) (*mcpListener, error) {
	l := &mcpListener{}
	if tokenFile != "" {
		data, err := os.ReadFile(tokenFile)
		if err != nil {
			return nil, fmt.Errorf("reading -mcp-token-file: %w", err)
		}
		l.token, _, _ = strings.Cut(strings.TrimSpace(string(data)), "\n")
		if l.token = strings.TrimSpace(l.token); len(l.token) < 16 {
			return nil, errors.New("-mcp-token-file: the token must be at least 16 characters")
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listening for MCP clients: %w", err)
	}
	if !isLoopback(ln.Addr()) && l.token == "" {
		ln.Close()
		return nil, fmt.Errorf("-mcp-listen %s is not a loopback address: set -mcp-token-file to require a bearer token", addr)
	}
	l.ln = ln
	return l, nil
}

// serve serves rt's gateway at /mcp until stop; the returned func stops it.
func (l *mcpListener) serve(rt *runtime.Runtime, logger *slog.Logger) (stop func(), err error) {
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := rt.MCPServer(ctx, runtime.MCPServerOptions{Tools: l.tools, StartupWait: l.startupWait, Logger: logger})
	if err != nil {
		cancel()
		l.ln.Close()
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", runtime.MCPHandler(srv, runtime.MCPHTTPOptions{Token: l.token}))
	hs := newGatewayHTTPServer(mux, logger, l.timeouts)
	// A client's standalone GET stream lasts as long as its session:
	// Shutdown (listeners closed by then) closes every session, so the
	// streams end at once instead of holding Shutdown for its grace. Each
	// Close waits for its session's requests, so each runs apart.
	hs.RegisterOnShutdown(func() {
		for ss := range srv.Sessions() {
			go ss.Close()
		}
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := hs.Serve(l.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("serving MCP clients", "error", err)
		}
	}()
	logger.Info("serving the gateway over Streamable HTTP", "url", "http://"+l.ln.Addr().String()+"/mcp", "token", l.token != "")
	return func() {
		cancel()
		sctx, scancel := context.WithTimeout(context.Background(), httpShutdownGrace)
		defer scancel()
		if hs.Shutdown(sctx) != nil {
			hs.Close()
		}
		<-done
	}, nil
}

// newGatewayHTTPServer is the http.Server of the gateway's Streamable
// HTTP endpoint: as newAPIServer, a client that sends its headers or body
// slowly, or holds an idle connection, is cut off (ReadHeader, Read,
// Idle). It has no WriteTimeout: a client's GET stream (server-to-client
// notifications: list_changed, logs) and a POST answered as an SSE stream
// (a tool call with progress) rightly stay open as long as the session or
// the call, and the SDK's handler sets no per-write deadline of its own as
// the management API's event stream does. ReadTimeout does not cut them:
// net/http clears the read deadline once a request's body is read.
func newGatewayHTTPServer(h http.Handler, logger *slog.Logger, t apiTimeouts) *http.Server {
	hs := newAPIServer(h, logger, t)
	hs.WriteTimeout = 0
	return hs
}

// noWaitIfZero maps a -startup-wait of 0 (which to MCPServerOptions means
// the default) to no wait, as a user who writes 0 means.
func noWaitIfZero(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}
