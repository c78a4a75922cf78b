package runtime

import (
	"context"
	"errors"
	"runtime/debug"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/telemetry"
	"github.com/openprogram/mcpvisor/prompts"
	"github.com/openprogram/mcpvisor/tools"
)

// This file is the runtime's side of OpenTelemetry (Options.TracerProvider,
// Options.MeterProvider): each traced* method is its public twin with a
// span and the call metrics around it. The public methods call them only
// when r.tel is set, so that a runtime without a provider pays one nil
// check per call.

// newTelemetry builds r.tel from the options; nil without a provider.
func (r *Runtime) newTelemetry() *telemetry.Telemetry {
	if r.opts.TracerProvider == nil && r.opts.MeterProvider == nil {
		return nil // nor read the build info
	}
	return telemetry.New(telemetry.Options{
		TracerProvider: r.opts.TracerProvider,
		MeterProvider:  r.opts.MeterProvider,
		Propagator:     r.opts.Propagator,
		Version:        moduleVersion(debug.ReadBuildInfo()), // the instrumentation's, not the host's ClientVersion
		States:         r.serverStates,
		Logger:         r.opts.Logger,
	})
}

// serverStates counts the configured servers in each state, for the
// servers gauge. It may run at any time from the callback's registration
// on, on the host's reader's goroutine.
func (r *Runtime) serverStates(yield func(state string, n int64)) {
	file := r.config.Load()
	if file == nil {
		return
	}
	counts := map[string]int64{}
	for _, srv := range file.Servers {
		if st, ok := r.board.State(srv.Name); ok {
			counts[string(st)]++
		}
	}
	for st, n := range counts {
		yield(st, n)
	}
}

// reducer is the event stream's reducer: the status board, and then the
// counters of restarts, logins and refreshes, which so count every event
// exactly (no subscription that could fall behind).
func (r *Runtime) reducer() func(e events.Event) events.Event {
	if r.tel == nil {
		return r.board.Apply
	}
	return func(e events.Event) events.Event {
		if e = r.board.Apply(e); e != nil {
			r.tel.Observe(e)
		}
		return e
	}
}

// protocolOf is the MCP version of the server's current session, "" if it
// has none.
func (r *Runtime) protocolOf(server string) string {
	if b := r.bindings.Get(server); b != nil {
		if conn := b.Current(); conn != nil {
			return conn.ProtocolVersion()
		}
	}
	return ""
}

// tracedCall is CallTool with its span and metrics.
func (r *Runtime) tracedCall(ctx context.Context, name string, t *tools.Tool, known bool, args any) (tools.Result, error) {
	op := telemetry.Op{Method: telemetry.MethodToolsCall, Target: name}
	switch {
	case known:
		op.Target, op.Registry, op.Server, op.Protocol = t.OriginalName, t.Name, t.Server, r.protocolOf(t.Server)
	case name == SearchToolName && r.opts.ToolSearch.Enabled:
		op.Registry = name // the runtime's own tool: bounded
	}
	ctx, call := r.tel.Start(ctx, op)
	res, err := r.execute(ctx, name, t, known, args)
	call.End(err, errorKind(err), res.IsError)
	return res, err
}

// tracedRead is ReadResource with its span and metrics.
func (r *Runtime) tracedRead(ctx context.Context, server, uri string) (ResourceResult, error) {
	op := telemetry.Op{Method: telemetry.MethodResourcesRead, URI: uri, Protocol: r.protocolOf(server)}
	if _, ok := r.config.Load().Get(server); ok {
		op.Server = server // a configured name: bounded, unlike any name a caller may send
	}
	ctx, call := r.tel.Start(ctx, op)
	res, err := r.readResource(ctx, server, uri)
	call.End(err, errorKind(err), false)
	return res, err
}

// tracedPrompt is GetPrompt with its span and metrics.
func (r *Runtime) tracedPrompt(ctx context.Context, name string, p *prompts.Prompt, known bool, args map[string]string) (prompts.Rendered, error) {
	op := telemetry.Op{Method: telemetry.MethodPromptsGet, Target: name}
	if known {
		op.Target, op.Registry, op.Server, op.Protocol = p.OriginalName, p.Name, p.Server, r.protocolOf(p.Server)
	}
	ctx, call := r.tel.Start(ctx, op)
	res, err := r.getPrompt(ctx, name, p, known, args)
	call.End(err, errorKind(err), false)
	return res, err
}

// Error kinds, the class of an operation's error in its span
// (mcpvisor.error.kind, error.type) and the errors metric: which of the
// runtime's errors it matched.
const (
	kindNeedsLogin       = "needs_login"
	kindUnknownTool      = "unknown_tool"
	kindUnknownPrompt    = "unknown_prompt"
	kindUnknownServer    = "unknown_server"
	kindNotReady         = "not_ready"
	kindUnresponsive     = "unresponsive"
	kindResponseTooLarge = "response_too_large"
	kindSessionClosed    = "session_closed"
	kindTimeout          = "timeout"
	kindNotDeclared      = "not_declared"
	kindBadResourceURI   = "bad_resource_uri"
	kindMissingArgument  = "missing_argument"
	kindShuttingDown     = "shutting_down"
	kindServerError      = "server_error" // the server's JSON-RPC error
	kindCanceled         = "canceled"
	kindDeadline         = "deadline_exceeded"
	kindOther            = "other"
)

// errorKind classifies err for telemetry; "" for nil. The more telling
// class comes first where an error matches two (a lost session's calls
// end with ErrSessionClosed and ErrUnresponsive; a tool of a server
// waiting for a login is unknown and needs the login).
func errorKind(err error) string {
	var missing *prompts.ArgumentError
	var rpc *jsonrpc.Error
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrNeedsLogin):
		return kindNeedsLogin
	case errors.Is(err, tools.ErrUnknownTool):
		return kindUnknownTool
	case errors.Is(err, prompts.ErrUnknownPrompt):
		return kindUnknownPrompt
	case errors.Is(err, ErrUnknownServer):
		return kindUnknownServer
	case errors.Is(err, tools.ErrNotReady):
		return kindNotReady
	case errors.Is(err, tools.ErrUnresponsive):
		return kindUnresponsive
	case errors.Is(err, tools.ErrResponseTooLarge):
		return kindResponseTooLarge
	case errors.Is(err, tools.ErrSessionClosed):
		return kindSessionClosed
	case errors.Is(err, tools.ErrTimeout):
		return kindTimeout
	case errors.Is(err, ErrNotDeclared):
		return kindNotDeclared
	case errors.Is(err, ErrBadResourceURI):
		return kindBadResourceURI
	case errors.As(err, &missing):
		return kindMissingArgument
	case errors.Is(err, ErrShuttingDown), errors.Is(err, tools.ErrRegistryClosed):
		return kindShuttingDown
	case errors.As(err, &rpc):
		return kindServerError
	case errors.Is(err, context.Canceled):
		return kindCanceled
	case errors.Is(err, context.DeadlineExceeded):
		return kindDeadline
	}
	return kindOther
}
