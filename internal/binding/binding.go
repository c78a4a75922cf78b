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
	"github.com/openprogram/mcpvisor/internal/mcpconn"
	"github.com/openprogram/mcpvisor/tools"
)

// Binding is one server's current connection and the entries bound to it.
// Publish and Withdraw are for its one owner (the server actor); the
// entries' calls and Current may run on any goroutine.
type Binding struct {
	server  string
	logger  *slog.Logger
	current atomic.Pointer[mcpconn.Conn]
}

// New returns the binding of server, with no connection yet. logger gets
// the entries that are skipped (an unusable schema, a name taken twice).
func New(server string, logger *slog.Logger) *Binding {
	return &Binding{server: server, logger: logger}
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
// capabilities call for.
func (b *Binding) Tools(conn *mcpconn.Conn, list []*mcp.Tool) []tools.Tool {
	return append(b.toolsOf(conn, list), b.metaTools(conn, list)...)
}

func (b *Binding) toolsOf(conn *mcpconn.Conn, from []*mcp.Tool) []tools.Tool {
	var list []tools.Tool
	seen := map[string]string{} // registry name -> original name
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
		list = append(list, conn.WithMetadata(t, tools.NewTool(name, b.server, t.Name, t.Description, schema, b.executor(t.Name))))
	}
	return list
}

// executor calls original on whatever connection is current when the call
// starts.
func (b *Binding) executor(original string) tools.ExecutorFunc {
	return func(ctx context.Context, args any) (tools.Result, error) {
		conn := b.current.Load()
		if conn == nil {
			return tools.Result{}, fmt.Errorf("calling %q on %q: %w", original, b.server, tools.ErrNotReady)
		}
		res, err := conn.CallTool(ctx, original, args)
		if err != nil {
			return tools.Result{}, err
		}
		return adapter.ConvertResult(res), nil
	}
}
