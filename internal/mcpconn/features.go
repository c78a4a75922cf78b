package mcpconn

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/loggate"
	"github.com/openprogram/mcpvisor/internal/redact"
	"github.com/openprogram/mcpvisor/tools"
)

// Lists a server can announce a change of (notifications/*/list_changed).
const (
	ListTools     = "tools"
	ListPrompts   = "prompts"
	ListResources = "resources"
)

// Features are the client features a host offers its servers (S9). The
// zero value offers none and answers every request at once.
type Features struct {
	// Sample answers sampling/createMessage with the host's model, tools
	// and several content blocks per message included (MCP 2025-11-25):
	// the connection declares sampling with its tools capability, as the
	// SDK does for CreateMessageWithToolsHandler. Nil: the server gets a
	// JSON-RPC error saying sampling is not configured.
	Sample func(ctx context.Context, req *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error)
	// Elicit answers elicitation/create. Nil: every request is declined.
	Elicit func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error)
	// Roots are the roots the server may ask for with roots/list.
	Roots []*mcp.Root
	// ListRoots, if set, answers the server's roots/list requests instead
	// of Roots (which then only answer a multi round-trip's roots input,
	// which the SDK fulfils without a hook). A gateway uses it to pass the
	// question to its client.
	ListRoots func(ctx context.Context) ([]*mcp.Root, error)
	// WatchRoots, if set, is given, once a session before protocol
	// 2026-07-28 is up, a function that sends it
	// notifications/roots/list_changed (the later protocol has none).
	WatchRoots func(notify func())
	// RendersApps advertises the MCP Apps extension (tools.AppsExtension)
	// with its HTML MIME type: the host can render ui:// resources, so
	// servers may send their tools' UIs. Off: servers hide them.
	RendersApps bool
	// ListChanged is called when the server says one of its lists changed
	// (ListTools, ListPrompts, ListResources). It must not block.
	ListChanged func(list string)
	// Subscriptions are the resource URIs the host subscribed to on this
	// server: each new session subscribes to them, and only their
	// notifications/resources/updated become events.ResourceUpdated. Nil:
	// none.
	Subscriptions Subscriptions
}

// ErrNoSampling is what a server asking for sampling gets when the host has
// no model callback: an answer, never a hang.
var ErrNoSampling = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "sampling is not configured in this MCP host"}

// clientOptions builds the SDK client options: the host's features, the
// server's log notifications to emit, progress to per-call
// callbacks.
func clientOptions(f Features, name string, emit func(events.Event), updates *updateThrottle, logger *slog.Logger, progress *progressRouter, scrub *redact.Scrubber, tail *Tail) *mcp.ClientOptions {
	sample := f.Sample
	if sample == nil {
		// Advertised anyway, so a server can tell "not configured" from
		// "not supported" and a sampling tool fails with a clear message.
		sample = func(context.Context, *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
			return nil, ErrNoSampling
		}
	}
	notify := func(list string) {
		if f.ListChanged != nil {
			f.ListChanged(list)
		}
	}
	return &mcp.ClientOptions{
		Capabilities:                  capabilities(f),
		Logger:                        logger,
		CreateMessageWithToolsHandler: sample,
		ElicitationHandler:            elicitHandler(f.Elicit),
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			notify(ListTools)
		},
		PromptListChangedHandler: func(context.Context, *mcp.PromptListChangedRequest) {
			notify(ListPrompts)
		},
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
			notify(ListResources)
		},
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			serverLog(emit, name, logger, &tail.serverLogs, scrub, req.Params)
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			progress.deliver(req.Params)
		},
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			resourceUpdated(updates, name, f.Subscriptions, scrub, req.Params)
		},
	}
}

// capabilities are the client capabilities beyond those the SDK infers
// from the handlers (sampling, elicitation): nil, the SDK's default (roots
// with listChanged), unless the host renders MCP Apps, which is that
// default plus the extension.
func capabilities(f Features) *mcp.ClientCapabilities {
	if !f.RendersApps {
		return nil
	}
	caps := &mcp.ClientCapabilities{RootsV2: &mcp.RootCapabilities{ListChanged: true}}
	caps.AddExtension(tools.AppsExtension, map[string]any{"mimeTypes": []string{tools.AppMIMEType}})
	return caps
}

// serverLog emits a server's notifications/message as an events.ServerLog
// of the server name, with the server's secrets scrubbed and bounded like
// its stderr lines and, like them, rate-limited by gate (a message kept
// back costs no formatting; the count of those is logged on logger).
func serverLog(emit func(events.Event), name string, logger *slog.Logger, gate *loggate.Gate, scrub *redact.Scrubber, p *mcp.LoggingMessageParams) {
	if p == nil {
		return
	}
	gate.Log(logger, serverLogRecords, func() {
		data := ""
		switch d := p.Data.(type) {
		case string:
			data = d
		default:
			raw, _ := json.Marshal(d)
			data = string(raw)
		}
		emit(events.ServerLog{
			Header: events.Header{Server: name},
			Level:  logLevel(p.Level),
			Logger: scrub.Line(p.Logger, maxLineBytes, false),
			Text:   scrub.Line(data, maxLineBytes, false),
		})
	})
}

// mcpLevels are the log levels MCP defines (RFC 5424's severities).
var mcpLevels = [...]mcp.LoggingLevel{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// logLevel is a server's log level as it may leave the connection: one of
// mcpLevels, or events.LevelUnknown. The SDK passes a server's level
// through unchecked, so any other value (a megabyte, a secret) is
// replaced rather than passed on.
func logLevel(l mcp.LoggingLevel) string {
	for _, m := range mcpLevels {
		if l == m {
			return string(m)
		}
	}
	return events.LevelUnknown
}

// serverLogLevel is the level asked of servers that log: what the host
// logger takes by default. The host's handler still filters.
const serverLogLevel = "info"

// perCallLogProtocol is the first protocol version whose servers take
// the log level from each request's _meta (and the SDK's client sends its
// _meta on every request). Versions are dates: they sort as strings.
const perCallLogProtocol = "2026-07-28"

// perCallLogLevel reports whether a session's calls carry the log level
// in their _meta: only where the server reads it there (protocol
// 2026-07-28 on) and logs at all (it declares logging). Anywhere else it
// would be bytes the server decodes and validates on every call for
// nothing.
func perCallLogLevel(res *mcp.InitializeResult) bool {
	return res != nil && res.ProtocolVersion >= perCallLogProtocol && res.Capabilities != nil && res.Capabilities.Logging != nil
}

// enableServerLogs asks a server that declares logging to send its log
// messages: servers send none until the client sets a level. A server
// that refuses only loses its logs.
func enableServerLogs(ctx context.Context, cs *mcp.ClientSession, logger *slog.Logger) {
	res := cs.InitializeResult()
	if res == nil || res.Capabilities == nil || res.Capabilities.Logging == nil {
		return
	}
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: serverLogLevel}); err != nil {
		logger.Debug("the server refused a log level", "error", err)
	}
}

// rootsMiddleware answers roots/list with list (Features.ListRoots).
func rootsMiddleware(list func(context.Context) ([]*mcp.Root, error)) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "roots/list" {
				return next(ctx, method, req)
			}
			roots, err := list(ctx)
			if err != nil {
				return nil, err
			}
			if roots == nil {
				roots = []*mcp.Root{} // never JSON null
			}
			return &mcp.ListRootsResult{Roots: roots}, nil
		}
	}
}

// noRootsChangedProtocol is the first protocol version without
// notifications/roots/list_changed (a server refuses it).
const noRootsChangedProtocol = "2026-07-28"

// rootsChangedMarker is the root notifyRootsChanged adds and removes at
// once when the client has none: the SDK sends roots/list_changed only
// from AddRoots and RemoveRoots.
var rootsChangedMarker = &mcp.Root{URI: "mcpvisor:roots-changed"}

// notifyRootsChanged makes client send its sessions
// notifications/roots/list_changed: re-adding a root it has changes
// nothing and notifies; a client without roots adds and removes the
// marker (two notifications). No server sees the marker: WatchRoots is
// only for sessions before 2026-07-28, whose roots/list Features.ListRoots
// answers; the client's own list answers only multi round-trips, which
// are 2026-07-28's.
func notifyRootsChanged(client *mcp.Client, roots []*mcp.Root) {
	if len(roots) > 0 {
		client.AddRoots(roots[0])
		return
	}
	client.AddRoots(rootsChangedMarker)
	client.RemoveRoots(rootsChangedMarker.URI)
}
