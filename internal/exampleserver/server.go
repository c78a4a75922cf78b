package exampleserver

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// version is the implementation version the server reports.
const version = "0.1.0"

// instructions is deliberately short: clients may show it to a model.
const instructions = "Example server for mcpvisor demos and tests. " +
	"Tools: echo, add, sleep, fail, image, resource, env, stderr, future, schema, described, consult " +
	"(and, when enabled, change; update, end_subscriptions; structured, structured_broken, structured_missing, structured_failing, " +
	"remote_ref, audio, annotated; icons, also a prompt; sized; freeze, probes; progress, progress_silent, meta). Prompt: greet. Resources: demo://readme, demo://notes/{id} " +
	"(subscribable; update changes a note). Completions: greet's arguments and the note id. " +
	"To clients that render MCP Apps also: tools app and app_refresh (for the app only), resource ui://demo/app."

// NewServer returns the example MCP server with all its tools, prompts and
// resources registered, for use with any transport (in-memory ones in tests
// and benchmarks).
//
// Of the options only Name, ChangeTool, UpdateTool, LeakTool, FaultTools,
// ClientTools, ResultTools, IconFlood, SizedTools, FreezeTool, ProgressTools, Protocol, InstructionsFile, PanicOnTool and Stderr apply
// here; the others concern the process or the
// stream and are handled by [Run].
func NewServer(opts Options) *mcp.Server {
	opts = opts.withDefaults()
	return newServer(opts, &lockedWriter{w: opts.Stderr})
}

// newServer builds the server around an already serialised stderr, which Run
// shares so that its own lines cannot interleave with the stderr tool's.
func newServer(opts Options, stderr *lockedWriter) *mcp.Server {
	srv := mcp.NewServer(implementation(opts), serverOptions(opts, stderr))
	if opts.PanicOnTool != "" {
		srv.AddReceivingMiddleware(panicOnTool(opts.PanicOnTool))
	}
	if opts.InitializeDelay > 0 || opts.InitializeDir != "" {
		slow := &slowInit{delay: opts.InitializeDelay, dir: opts.InitializeDir, name: opts.Name,
			barrier: opts.InitializeBarrier, barrierWait: opts.InitializeBarrierWait}
		srv.AddReceivingMiddleware(slow.middleware)
	}
	t := newTools(stderr)
	addTools(srv, t)
	addConsultTool(srv)
	if opts.ChangeTool {
		addChangeTool(srv, t)
	}
	if opts.LeakTool {
		addLeakTool(srv, t)
	}
	if opts.FaultTools {
		addFaultTools(srv)
	}
	if opts.ClientTools {
		addClientTools(srv)
	}
	if opts.ResultTools {
		addResultTools(srv)
	}
	if opts.FreezeTool {
		addFreezeTools(srv)
	}
	if opts.ProgressTools {
		addProgressTools(srv)
	}
	addPrompts(srv)
	if opts.IconFlood {
		addIconFlood(srv)
	}
	if opts.SizedTools {
		addSizedTools(srv)
	}
	n := &notes{}
	addResources(srv, n)
	if opts.UpdateTool {
		addUpdateTool(srv, n)
		addEndSubscriptionsTool(srv, &listens{})
	}
	addApp(srv, opts.LeakTool)
	return srv
}

func serverOptions(opts Options, stderr *lockedWriter) *mcp.ServerOptions {
	so := &mcp.ServerOptions{Instructions: instructionsOf(opts, stderr)}
	subscribable(so)
	if opts.ClientTools {
		so.RootsListChangedHandler = rootsChanged(stderr)
	}
	if opts.Protocol != "" {
		so.SupportedProtocolVersions = []string{opts.Protocol}
	}
	if opts.NoLogging {
		// Not nil, which is the SDK's default of logging only; the SDK
		// adds what the server registers (tools, prompts, resources).
		so.Capabilities = &mcp.ServerCapabilities{}
	}
	return so
}

// panicOnTool returns middleware that panics on any call of the named tool.
// It sits in front of tool lookup so that it fires even for a name that is
// not registered, which lets tests crash the server on demand.
func panicOnTool(name string) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if call, ok := req.(*mcp.CallToolRequest); ok && call.Params.Name == name {
				panic(fmt.Sprintf("exampleserver: PanicOnTool %q was called", name))
			}
			return next(ctx, method, req)
		}
	}
}
