package actors

import (
	"sync"

	"github.com/openprogram/mcpvisor/events"
)

// Gate passes the events of one server actor incarnation, and of what it
// hands its emit to (its session, connection and OAuth flow), until the
// manager retires it: nothing of a removed server may follow its
// ServerRemoved, or a consumer rebuilding status from the stream would
// bring it back (and a server re-added under the name would show the old
// one's "stopped"). Only the manager retires or closes a gate; each
// incarnation has its own.
type Gate struct {
	mu      sync.RWMutex
	retired bool
}

// Emit emits e on bus unless the gate is retired. A nil Gate is never
// retired.
func (g *Gate) Emit(bus *events.Bus, e events.Event) {
	if g == nil {
		bus.Emit(e)
		return
	}
	// The check and the emit are one step under the read lock, so Retire
	// cannot slip its last event in between.
	g.mu.RLock()
	defer g.mu.RUnlock()
	if !g.retired {
		bus.Emit(e)
	}
}

// Close drops every later event of the gate, emitting nothing: the
// manager closes the gate of an incarnation that died on its own, so that
// its connection's stragglers (a late stderr line, a token refresh) cannot
// pass once a respawned incarnation speaks for the server.
func (g *Gate) Close() {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.retired = true
}

// Retire drops every later event of the gate and emits last (the
// manager's ServerRemoved) after every event that already passed.
func (g *Gate) Retire(bus *events.Bus, last events.Event) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.retired = true
	bus.Emit(last)
}
