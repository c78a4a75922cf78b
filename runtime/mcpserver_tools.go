package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/adapter"
	"github.com/openprogram/mcpvisor/internal/binding"
	"github.com/openprogram/mcpvisor/tools"
)

// syncTools makes the server's tools the registry's that the filter
// allows (with tool search on, search_tools and the pinned tools only:
// servedTools): what is new or changed is added (replacing), what went
// away is removed, what stayed the same is left alone (so it sends no
// list_changed).
func (m *mirror) syncTools() {
	want := map[string]bool{}
	for _, t := range m.servedTools() {
		if !m.visible(t.Name) {
			continue
		}
		mt, err := mcpTool(t)
		if err != nil {
			m.logger.Warn("not serving a tool the MCP server could not list", "tool", t.Name, "error", err)
			continue
		}
		key := digestOf(mt)
		want[t.Name] = true
		if m.tools[t.Name] == key {
			continue
		}
		if len(t.OutputSchema) > 0 && mt.OutputSchema == nil {
			// The ref itself is the server's text: not logged.
			m.logger.Warn("serving a tool without its output schema, which refers to another document", "tool", t.Name)
		}
		if err := catch(func() { m.srv.AddTool(mt, m.callTool(t.Name, t.Server)) }); err != nil {
			m.logger.Warn("not serving a tool the MCP server refused", "tool", t.Name, "error", err)
			delete(want, t.Name)
			continue
		}
		m.tools[t.Name] = key
	}
	var gone []string
	for name := range m.tools {
		if !want[name] {
			gone = append(gone, name)
			delete(m.tools, name)
		}
	}
	if len(gone) > 0 {
		m.srv.RemoveTools(gone...)
	}
	m.served.Store(&want)
}

// servedTools is what the server lists before the filter: every tool of
// the registry, or with tool search on what the runtime hands a model
// (Runtime.ModelTools: search_tools and the pinned tools).
func (m *mirror) servedTools() []tools.Tool {
	if m.rt.opts.ToolSearch.Enabled {
		return m.rt.ModelTools()
	}
	return m.rt.registry.List()
}

// visible reports whether the server's clients may see and call the tool
// registered as name: the filter decides, except for search_tools with
// tool search on, which is the runtime's own and answers only tools the
// filter allows.
func (m *mirror) visible(name string) bool {
	return (name == SearchToolName && m.rt.opts.ToolSearch.Enabled) || m.opts.Tools.allows(name)
}

// serverVisible reports whether the server's clients may see what server
// offers besides its tools and prompts: its resources, resource
// templates, resource subscriptions, template completions and log lines
// (and, for the forwarding, what it asks of a client). The filter decides
// on the bare prefix "{server}__": an allow of "a__*" allows server a, a
// deny of "ex__*" hides server ex, a deny of "*__delete_*" hides nothing.
func (m *mirror) serverVisible(server string) bool {
	return m.opts.Tools.allows(server + "__")
}

// callUnlisted is the server's middleware with tool search on: a
// tools/call of a tool the server does not list (the model found it with
// search_tools) goes to the tool's handler as a listed one's does, where
// the SDK would answer "unknown tool". The filter still decides, and the
// runtime answers an unknown name.
func (m *mirror) callUnlisted(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if call, ok := req.(*mcp.CallToolRequest); ok && method == "tools/call" && call.Params != nil {
			if served := m.served.Load(); served == nil || !(*served)[call.Params.Name] {
				// The server is the registry's (an unknown name has none:
				// the runtime answers it, with nothing to forward).
				t, _ := m.rt.registry.Get(call.Params.Name)
				return m.callTool(call.Params.Name, t.Server)(ctx, call)
			}
		}
		return next(ctx, method, req)
	}
}

// catch runs add, an SDK Add* that panics on what it refuses (a schema,
// a URI template); mcpTool checks the known causes first, this catches
// the rest.
func catch(add func()) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%v", p)
		}
	}()
	add()
	return nil
}

// mcpTool is t as an MCP tool: its registry name and every piece of
// metadata the registry holds.
func mcpTool(t tools.Tool) (*mcp.Tool, error) {
	var schema map[string]any
	if err := json.Unmarshal(t.InputSchema, &schema); err != nil || schema["type"] != "object" {
		return nil, errors.New(`its input schema is not a JSON object of "type": "object"`)
	}
	mt := &mcp.Tool{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: t.InputSchema, Icons: mcpIcons(t.Icons)}
	if len(t.OutputSchema) > 0 {
		if !json.Valid(t.OutputSchema) {
			return nil, errors.New("its output schema is not JSON")
		}
		if remoteRef(t.OutputSchema) == "" { // else served without one (syncTools logs it)
			mt.OutputSchema = t.OutputSchema
		}
	}
	if len(t.Meta) > 0 {
		if err := json.Unmarshal(t.Meta, &mt.Meta); err != nil {
			return nil, fmt.Errorf("its _meta is not a JSON object: %w", err)
		}
	}
	if a := t.Annotations; a != nil {
		mt.Annotations = &mcp.ToolAnnotations{Title: a.Title, DestructiveHint: a.DestructiveHint, OpenWorldHint: a.OpenWorldHint,
			ReadOnlyHint: a.ReadOnlyHint != nil && *a.ReadOnlyHint, IdempotentHint: a.IdempotentHint != nil && *a.IdempotentHint}
	}
	return mt, nil
}

func mcpIcons(in []tools.Icon) []mcp.Icon {
	if len(in) == 0 {
		return nil
	}
	out := make([]mcp.Icon, len(in))
	for i, ic := range in {
		out[i] = mcp.Icon{Source: ic.Src, MIMEType: ic.MIMEType, Sizes: slices.Clone(ic.Sizes), Theme: mcp.IconTheme(ic.Theme)}
	}
	return out
}

// callTool is the handler of the tool registered as name, of server. A
// client on protocol 2026-07-28 that declared something the gateway can
// ask gets the call run as a parked call (see parkedCall), and its
// retries (requestState set) go on with it.
func (m *mirror) callTool(name, server string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if !m.visible(name) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", name)}
		}
		if req.Params.RequestState != "" {
			return m.parked.resume(ctx, req, name)
		}
		if req.Session != nil && onNewProtocol(req.Session) {
			// What the session's first request declared (the SDK keeps it
			// as the session's): req.ClientCapabilities would decode the
			// request's _meta again on every call.
			if p := req.Session.InitializeParams(); askable(p.Capabilities) {
				return m.callParked(ctx, req, name, server, p.Capabilities)
			}
		}
		var caps *mcp.ClientCapabilities
		if req.Session != nil {
			caps = clientCaps(req.Session)
		}
		ctx, run := m.upstreamCall(ctx, req, name, server, caps, nil)
		if token := req.Params.GetProgressToken(); token != nil && req.Session != nil {
			session := req.Session
			ctx = tools.WithProgress(ctx, func(p tools.Progress) {
				// Best effort: a report after the answer, or to a client
				// gone, has nowhere to go.
				_ = session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: p.Progress, Total: p.Total, Message: p.Message})
			})
		}
		return run(ctx)
	}
}

// callParked runs the call of name as a parked call and serves its first
// round under ctx (the client's request).
func (m *mirror) callParked(ctx context.Context, req *mcp.CallToolRequest, name, server string, caps *mcp.ClientCapabilities) (*mcp.CallToolResult, error) {
	pc, err := m.parked.start(req.Session, name, func(pc *parkedCall) func() (*mcp.CallToolResult, error) {
		uctx, run := m.upstreamCall(pc.ctx, req, name, server, caps, pc)
		if req.Params.GetProgressToken() != nil {
			// Only then: a progress callback makes the runtime send the
			// server a token of its own. A client's retries carry the
			// first request's _meta (the go-sdk's do), so its rounds
			// have a token if the first had.
			uctx = tools.WithProgress(uctx, pc.progress)
		}
		return func() (*mcp.CallToolResult, error) { return run(uctx) }
	})
	if err != nil {
		return nil, err
	}
	pc.mu.Lock()
	pc.round = &round{ctx: ctx, progress: req.Params.GetProgressToken()}
	pc.mu.Unlock()
	return pc.serve(ctx)
}

// upstreamCall prepares the runtime's call of name (of server) for req,
// under ctx: the context to run it under (progress may be added) and the
// call, answering as the client gets it. What the server asks during the
// call may go to the client (caps: what it declared; park: its parked
// call).
func (m *mirror) upstreamCall(ctx context.Context, req *mcp.CallToolRequest, name, server string, caps *mcp.ClientCapabilities, park *parkedCall) (context.Context, func(context.Context) (*mcp.CallToolResult, error)) {
	if name == SearchToolName && len(m.opts.Tools.Allow)+len(m.opts.Tools.Deny) > 0 {
		ctx = withSearchHidden(ctx, func(t tools.Tool) bool { return !m.opts.Tools.allows(t.Name) })
	}
	ctx, pass := binding.WithPassthrough(ctx)
	ctx, done := m.rt.fwd.begin(ctx, server, req.Session, caps, park)
	var args any
	if len(req.Params.Arguments) > 0 {
		args = req.Params.Arguments
	}
	return ctx, func(ctx context.Context) (*mcp.CallToolResult, error) {
		defer done()
		res, err := m.rt.CallTool(ctx, name, args)
		switch {
		case errors.Is(err, tools.ErrUnknownTool):
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
		case err != nil && ctx.Err() != nil:
			return nil, ctx.Err()
		case err != nil:
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}, nil
		}
		return gatewayResult(res, pass.Result), nil
	}
}

// gatewayResult is what the client gets: the server's own blocks and _meta
// (raw, the Passthrough's) with the runtime's structured content and
// isError, or the runtime's converted blocks where the runtime changed
// the result (cut to the caps, or an output schema mismatch) or the
// server's answer is not at hand (a resource or prompt tool).
func gatewayResult(res tools.Result, raw *mcp.CallToolResult) *mcp.CallToolResult {
	out := &mcp.CallToolResult{IsError: res.IsError}
	if len(res.StructuredContent) > 0 {
		out.StructuredContent = res.StructuredContent
	}
	_, cut := res.Details[adapter.DetailTruncated]
	_, mismatch := res.Details[adapter.DetailOutputSchemaMismatch]
	if raw != nil {
		out.Meta = raw.Meta
		if !cut && !mismatch {
			out.Content = raw.Content
		}
	}
	if out.Content == nil {
		out.Content = make([]mcp.Content, 0, len(res.Content))
		for _, c := range res.Content {
			out.Content = append(out.Content, mcpContent(c))
		}
	}
	return out
}

// mcpContent is a converted block as MCP content.
func mcpContent(c tools.Content) mcp.Content {
	var ann *mcp.Annotations
	if a := c.Annotations; a != nil {
		ann = &mcp.Annotations{LastModified: a.LastModified}
		for _, who := range a.Audience {
			ann.Audience = append(ann.Audience, mcp.Role(who))
		}
		if a.Priority != nil {
			ann.Priority = *a.Priority
		}
	}
	switch c.Type {
	case tools.ContentImage:
		return &mcp.ImageContent{Data: c.Data, MIMEType: c.MIMEType, Annotations: ann}
	case tools.ContentAudio:
		return &mcp.AudioContent{Data: c.Data, MIMEType: c.MIMEType, Annotations: ann}
	}
	return &mcp.TextContent{Text: c.Text, Annotations: ann}
}

// sortedKeys is the keys of a set, sorted (for stable logs and tests).
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
