package binding

import "sync"

// Directory finds a server's binding by its configured name, for the
// runtime's requests that name a server rather than a registry entry
// (read a resource, complete an argument, subscribe). Each server actor
// incarnation puts its binding in when it starts and drops it when it
// stops; the request then runs on the binding's current connection, never
// through an actor.
type Directory struct {
	mu sync.RWMutex
	m  map[string]*Binding
}

// Put makes b the binding of its server, replacing an earlier
// incarnation's.
func (d *Directory) Put(b *Binding) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.m == nil {
		d.m = map[string]*Binding{}
	}
	d.m[b.server] = b
}

// Drop removes b, unless a later incarnation of its server has put its own
// binding in since.
func (d *Directory) Drop(b *Binding) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.m[b.server] == b {
		delete(d.m, b.server)
	}
}

// Get is the binding of server, or nil when no actor of that name runs.
func (d *Directory) Get(server string) *Binding {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.m[server]
}

// Server is the configured name of the server the binding belongs to.
func (b *Binding) Server() string { return b.server }
