package tools

import (
	"context"
	"encoding/json"
	"errors"
)

// Errors a tool call can return, matched with errors.Is. Each call wraps
// them with the tool's and server's names.
var (
	// ErrUnknownTool: no tool of that name is registered.
	ErrUnknownTool = errors.New("unknown tool")
	// ErrNotReady: the tool's server has no live session at the moment
	// (starting, restarting, failed, disabled or removed).
	ErrNotReady = errors.New("server not ready")
	// ErrSessionClosed: the session went away while the call was running
	// or waiting for a max_concurrent_calls slot.
	ErrSessionClosed = errors.New("session closed")
	// ErrTimeout: the server did not answer within its timeout_seconds
	// (which includes any wait for a max_concurrent_calls slot).
	ErrTimeout = errors.New("tool call timed out")
	// ErrResponseTooLarge: the server's answer was over the size the
	// transport accepts (16 MiB for one stdio frame or a remote answer,
	// 64 KiB for a remote error answer); its session was ended and is
	// restarted like any lost session.
	ErrResponseTooLarge = errors.New("server answer too large")
	// ErrUnresponsive: the server stopped answering (a keepalive probe
	// went unanswered for a whole interval, or its process is stopped);
	// its process group was killed, its session ended and it is restarted
	// like any lost session. A call in flight then fails with
	// ErrSessionClosed and this.
	ErrUnresponsive = errors.New("server unresponsive")
)

// Executor runs one call of a remote tool. Args is anything that marshals
// to a JSON object (map[string]any, json.RawMessage, a struct).
type Executor interface {
	Execute(ctx context.Context, args any) (Result, error)
}

// ExecutorFunc adapts a function to Executor.
type ExecutorFunc func(ctx context.Context, args any) (Result, error)

// Execute calls f.
func (f ExecutorFunc) Execute(ctx context.Context, args any) (Result, error) { return f(ctx, args) }

// Tool is a remote MCP tool as the host's model sees it: a local function
// with a name, a description and a JSON Schema for its arguments.
type Tool struct {
	// Name is the registry name, "{server}__{tool}".
	Name string `json:"name"`
	// Server is the configured name of the server that provides the tool.
	Server string `json:"server"`
	// OriginalName is the tool's name on its server; calls use it.
	OriginalName string `json:"original_name"`
	// Description is the server's description, unchanged.
	Description string `json:"description"`
	// InputSchema is the server's input JSON Schema.
	InputSchema json.RawMessage `json:"input_schema"`
	// Title is the tool's human-readable name, if the server sent one.
	Title string `json:"title,omitempty"`
	// Annotations are the server's behaviour hints, nil if it sent none.
	Annotations *Annotations `json:"annotations,omitempty"`
	// OutputSchema is the JSON Schema of the tool's structured result, if
	// it declares one. On stdio it is byte for byte what the server sent,
	// like InputSchema; on Streamable HTTP and SSE the SDK has decoded it
	// and it is re-encoded (same meaning, keys possibly reordered).
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
	// Icons are the server's icons for the tool, bounded and scrubbed
	// (see Icon).
	Icons []Icon `json:"icons,omitempty"`
	// Meta is the tool's _meta object (for MCP Apps it carries
	// ui.resourceUri), kept as sent on stdio and re-encoded on HTTP/SSE.
	Meta json.RawMessage `json:"meta,omitempty"`
	// UIResourceURI is the ui:// resource of the tool's MCP App
	// (_meta.ui.resourceUri, or the deprecated _meta["ui/resourceUri"]),
	// empty for a tool without one. The server sends it only to hosts that
	// set Options.RendersApps. A host renders the resource (read with
	// Runtime.ReadResource) to show the tool's results. A value that is
	// not a ui:// URI, or longer than 2 KiB, is not taken (it stays in
	// Meta): the extension allows only ui:// resources.
	UIResourceURI string `json:"ui_resource_uri,omitempty"`
	// Visibility is who the tool is for, always present in its JSON so
	// that a host need not know the default: _meta.ui.visibility as sent
	// (of VisibleToModel and VisibleToApp, in that order, other values
	// dropped), DefaultVisibility when the server sent none or an
	// unreadable one (NewTool sets it), empty (neither) when it sent none
	// of the two. What the server sent is in Meta. See ForModel and
	// ForApp; nil (a Tool literal) counts as the default.
	Visibility []string `json:"visibility"`

	exec Executor
}

// NewTool returns a tool whose Execute runs exec, for the model and the
// app (DefaultVisibility).
func NewTool(name, server, original, description string, schema json.RawMessage, exec Executor) Tool {
	return Tool{Name: name, Server: server, OriginalName: original, Description: description, InputSchema: schema, Visibility: DefaultVisibility(), exec: exec}
}

// Execute calls the tool on its server's current session. It never waits
// for a restart: if the server is not ready it fails at once with
// ErrNotReady.
func (t Tool) Execute(ctx context.Context, args any) (Result, error) {
	if t.exec == nil {
		return Result{}, ErrNotReady
	}
	return t.exec.Execute(ctx, args)
}
