package actors

import (
	"sync"

	"github.com/openprogram/mcpvisor/internal/mcpconn"
)

// Tails holds the stderr tail of each server by name, for as long as the
// name is configured: the server actor's sessions write it (across
// restarts and respawns, so a crash loop's last lines stay visible) and
// the status board reads it live. Reading a tail is not a status write.
// The zero value is ready; safe for concurrent use.
type Tails struct {
	mu sync.Mutex
	m  map[string]*mcpconn.Tail
}

// Of returns the tail of a server, made on first use.
func (t *Tails) Of(name string) *mcpconn.Tail {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[string]*mcpconn.Tail{}
	}
	tail := t.m[name]
	if tail == nil {
		tail = &mcpconn.Tail{}
		t.m[name] = tail
	}
	return tail
}

// Lines returns a server's last stderr lines, oldest first; nil for a
// server without a tail.
func (t *Tails) Lines(name string) []string {
	t.mu.Lock()
	tail := t.m[name]
	t.mu.Unlock()
	if tail == nil {
		return nil
	}
	return tail.Lines()
}

// Forget drops a removed server's tail: a server added later under the
// name starts with an empty one.
func (t *Tails) Forget(name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.m, name)
}
