// Package binding turns a live MCP connection into registry entries (the
// server's tools, its resource and prompt tools, its prompts) whose calls
// run on whatever connection is current when they start.
//
// The call path never passes through an actor (DESIGN.md §1): the server
// actor alone publishes the current connection (Publish, Withdraw), from
// its own Receive; the entries built here read it with one atomic load per
// call. A tool the host kept across a restart of the session still works,
// and a call while no session is ready fails at once with
// tools.ErrNotReady instead of queueing behind the restart.
package binding

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/adapter"
	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/mcpconn"
	"github.com/openprogram/mcpvisor/tools"
)

// Binding is one server's current connection and the entries bound to it.
// Publish and Withdraw are for its one owner (the server actor); the
// entries' calls and Current may run on any goroutine.
type Binding struct {
	server  string
	logger  *slog.Logger
	emit    func(events.Event)
	current atomic.Pointer[mcpconn.Conn]
	policy  atomic.Pointer[Policy]

	// filtered is how many tools the last Tools left out; only the owner
	// touches it.
	filtered int

	// checks are the output schema checks of the last listing, by the
	// tools' original names; only the owner touches them (in Tools).
	checks map[string]*outputCheck
}

// New returns the binding of server, with no connection yet. logger gets
// the entries that are skipped (an unusable schema, a name taken twice).
// The events of its listings (OutputSchemaUnusable) go nowhere until
// WithEvents.
func New(server string, logger *slog.Logger) *Binding {
	b := &Binding{server: server, logger: logger, emit: func(events.Event) {}}
	b.policy.Store(PolicyOf(config.Server{}))
	return b
}

// WithEvents makes emit the receiver of the binding's events and returns
// b. It is for the owner, before the first Tools. emit must be safe to
// call from any goroutine: a check compiled at a tool's first result
// reports its failure on the caller's (see compileFirst).
func (b *Binding) WithEvents(emit func(events.Event)) *Binding {
	b.emit = emit
	return b
}

// Publish makes conn the connection every call of the binding's entries
// runs on.
func (b *Binding) Publish(conn *mcpconn.Conn) { b.current.Store(conn) }

// Withdraw takes the connection out of service: calls that start from
// now on fail with tools.ErrNotReady.
func (b *Binding) Withdraw() { b.current.Store(nil) }

// Current is the published connection, or nil.
func (b *Binding) Current() *mcpconn.Conn { return b.current.Load() }

// Tools returns the registry entries for list, a listing of conn: the
// server's own tools, then the resource and prompt tools conn's
// capabilities call for, less those the policy's filter leaves out
// (counted by Filtered). It is for the binding's owner, like Publish: it
// compiles the output schemas it has not seen yet (see checkFor).
func (b *Binding) Tools(conn *mcpconn.Conn, list []*mcp.Tool) []tools.Tool {
	p := b.currentPolicy()
	b.filtered = 0
	kept := list
	if !p.Filter.IsZero() {
		kept = make([]*mcp.Tool, 0, len(list))
		for _, t := range list {
			if t != nil && !p.Filter.Allows(t.Name) {
				b.filtered++
				continue
			}
			kept = append(kept, t)
		}
	}
	return append(b.toolsOf(conn, kept, p), b.metaTools(conn, list, p)...)
}

func (b *Binding) toolsOf(conn *mcpconn.Conn, from []*mcp.Tool, p *Policy) []tools.Tool {
	var list []tools.Tool
	seen := map[string]string{} // registry name -> original name
	checks := map[string]*outputCheck{}
	defer func() { b.checks = checks }()
	for _, t := range from {
		schema, err := conn.InputSchema(t)
		if err != nil {
			b.logger.Warn("skipping tool with unusable input schema", "tool", t.Name, "error", err)
			continue
		}
		name := adapter.ToolName(b.server, t.Name)
		if first, dup := seen[name]; dup {
			// Two names that differ only in characters a registry name
			// cannot hold ("a.b", "a_b"): the first keeps the name.
			b.logger.Warn("tool name taken by another tool of the same server; skipping it", "tool", t.Name, "name", name, "kept", first)
			continue
		}
		seen[name] = t.Name
		call := &toolCall{b: b, original: t.Name, built: p}
		tool := conn.WithMetadata(t, tools.NewTool(name, b.server, t.Name, t.Description, schema, call))
		// Set before the tool is registered, which publishes it to callers.
		call.check = b.checkFor(conn, name, t.Name, tool.OutputSchema, checks)
		list = append(list, tool)
	}
	return list
}

// toolCall calls original on whatever connection is current when the call
// starts, checks its structured result with check (nil: none) and caps it
// by the policy current then. built is the policy it was registered under.
type toolCall struct {
	b        *Binding
	original string
	check    *outputCheck
	built    *Policy
}

// Execute implements tools.Executor.
func (c *toolCall) Execute(ctx context.Context, args any) (tools.Result, error) {
	p := c.b.currentPolicy()
	if !allowed(p, c.built, c.original) {
		return tools.Result{}, errFiltered(c.b.server, c.original)
	}
	conn := c.b.current.Load()
	if conn == nil {
		return tools.Result{}, fmt.Errorf("calling %q on %q: %w", c.original, c.b.server, tools.ErrNotReady)
	}
	res, structured, err := conn.CallToolJSON(ctx, c.original, args)
	if err != nil {
		return tools.Result{}, err
	}
	keep(ctx, conn, res)
	if c.check != nil && res != nil && !res.IsError {
		c.b.compileFirst(conn, c.original, c.check)
	}
	out := result(conn, c.check, res, structured)
	capResult(&out, p.MaxText, p.MaxMedia)
	return out, nil
}
