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
// one's "stopped"). Only the manager retires a gate.
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

// Retire drops every later event of the gate and emits last (the
// manager's ServerRemoved) after every event that already passed.
func (g *Gate) Retire(bus *events.Bus, last events.Event) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.retired = true
	bus.Emit(last)
}
