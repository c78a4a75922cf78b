package runtime

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/status"
)

// DefaultGatewayStartupWait is MCPServerOptions.StartupWait's default: long
// enough for local servers and a cached npx package to connect, well
// below the usual client request timeout (the TypeScript SDK's is 60 s),
// so a client that lists once at start gets the tools rather than an
// error; a server slower than that still reaches it with list_changed.
const DefaultGatewayStartupWait = 10 * time.Second

// startupGate holds a gateway's list requests back until the runtime's
// startup settled: every server that was in its first connection attempt
// when the gateway was built has left it (ready, failed, needs login,
// disabled, removed...) and the resource listings that started meanwhile
// reported; or until the wait ran out. pending and open are the mirror's
// run goroutine's (and MCPServer's before run starts); settled is closed
// once, by whichever comes first.
type startupGate struct {
	// pending: the servers whose first attempt has not ended, true once
	// they showed ready and their tools are not registered yet (a server
	// shows ready just before it registers them).
	pending map[string]bool
	open    bool
	settled chan struct{}
	once    sync.Once
	timer   *time.Timer
}

// initStartup arms the gate: the servers still in their first attempt
// (startupCheck), and the timer that opens the gate at the latest. Called after the mirror subscribed to the
// events, so no move out of starting falls between.
func (m *mirror) initStartup(wait time.Duration) {
	g := &m.startup
	g.settled = make(chan struct{})
	g.pending = map[string]bool{}
	if wait < 0 {
		g.release()
		return
	}
	for _, srv := range m.rt.config.Load().Servers {
		// A server the filter hides with all its tools shows nothing
		// here: nothing to wait for.
		if !m.serverVisible(srv.Name) && m.opts.Tools.hidesAll(srv.Name) {
			continue
		}
		m.startupCheck(srv.Name, true)
	}
	g.timer = time.AfterFunc(wait, g.release)
	m.settleStartup()
}

// startupCheck looks at server name on the status board: still in its
// first attempt (starting, never out of it: a move into starting from
// ready, backoff, failed or needs_auth counts a restart, and with no
// state yet), it is pending; ready, it is pending until its tools are
// registered (settleStartup checks); anything else ends its wait. add
// says whether a server not pending yet may become so (at initStartup
// only: what comes later is not startup).
func (m *mirror) startupCheck(name string, add bool) {
	g := &m.startup
	if _, ok := g.pending[name]; !ok && !add {
		return
	}
	switch st, ok := m.rt.board.State(name); {
	case ok && st == status.Ready:
		g.pending[name] = true
	case ok && st != status.Starting:
		delete(g.pending, name)
	default:
		if full, ok := m.rt.board.Get(name); ok && full.Restarts > 0 {
			delete(g.pending, name)
		} else {
			g.pending[name] = false
		}
	}
}

// startupEvent takes what e says about the pending servers.
func (m *mirror) startupEvent(e events.Event) {
	g := &m.startup
	if g.open {
		return
	}
	if _, ok := g.pending[e.Head().Server]; !ok && e.Head().Server != "" {
		return
	}
	switch e := e.(type) {
	case events.StateChanged:
		switch {
		case e.To == string(status.Ready):
			g.pending[e.Server] = true
		case e.To != string(status.Starting) || e.Restarts > 0:
			delete(g.pending, e.Server)
		}
	case events.ToolsChanged: // registered, or all filtered out
		delete(g.pending, e.Server)
	case events.ServerRemoved:
		delete(g.pending, e.Server)
	case events.Dropped:
		for name := range g.pending {
			m.startupCheck(name, false)
		}
	}
}

// settleStartup opens the gate once no server is pending (a ready one
// stops pending once its tools are registered) and no resource listing is
// in flight, having synced the tools first: the registry's news may still
// wait in run's select.
func (m *mirror) settleStartup() {
	g := &m.startup
	if g.open {
		return
	}
	for name, ready := range g.pending {
		if ready && m.registered(name) {
			delete(g.pending, name)
		}
	}
	if len(g.pending) > 0 {
		return
	}
	for _, busy := range m.inflight {
		if busy {
			return
		}
	}
	m.syncTools()
	g.open = true
	g.close()
}

// close opens the gate for good and stops its timer: when startup
// settled, and when the mirror stops (no request waits for a gate that
// nothing opens any more).
func (g *startupGate) close() {
	g.release()
	if g.timer != nil {
		g.timer.Stop()
	}
}

// registered reports whether a server that showed ready has its tools in
// the registry, or has none to register (it lists no tools).
func (m *mirror) registered(server string) bool {
	if len(m.rt.registry.ServerTools(server)) > 0 {
		return true
	}
	conn, err := m.rt.connOf(server, "startup")
	return err != nil || len(conn.Tools()) == 0
}

// release opens the gate, at most once (the timer's goroutine or the
// mirror's).
func (g *startupGate) release() {
	g.once.Do(func() { close(g.settled) })
}

// awaitStartup is the gateway's outermost middleware: a list request
// (tools, prompts, resources, resource templates) and a tools/call of a
// name the server does not serve (yet) wait for the startup gate, bounded
// by the request's context. Everything else (initialize, ping, a call of
// a served tool...) passes at once.
func (m *mirror) awaitStartup(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if m.waits(method, req) {
			select {
			case <-m.startup.settled:
			case <-ctx.Done():
				return nil, fmt.Errorf("%s waiting for the gateway's servers to start: %w", method, ctx.Err())
			}
		}
		return next(ctx, method, req)
	}
}

// waits tells whether a request waits for the startup gate.
func (m *mirror) waits(method string, req mcp.Request) bool {
	select {
	case <-m.startup.settled:
		return false
	default:
	}
	switch method {
	case "tools/list", "prompts/list", "resources/list", "resources/templates/list":
		return true
	case "tools/call":
		call, ok := req.(*mcp.CallToolRequest)
		if !ok || call.Params == nil {
			return false
		}
		name := call.Params.Name
		if served := m.served.Load(); served != nil && (*served)[name] {
			return false
		}
		if !m.visible(name) {
			return false // filtered: no wait makes it callable
		}
		_, registered := m.rt.registry.Get(name)
		// With tool search on, a registered tool is callable unlisted.
		return !(registered && m.rt.opts.ToolSearch.Enabled)
	}
	return false
}
