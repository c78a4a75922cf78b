package tools

import (
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// ErrRegistryClosed is returned by SetServer after Close: once a runtime
// shuts down nothing may register again.
var ErrRegistryClosed = errors.New("tool registry closed")

// Registry is the host-facing set of tools of every ready server. It is safe
// for concurrent use; reads (List, Get) take no lock and cost no allocation
// beyond the returned copy.
//
// Each server's tools are replaced as a whole, so a reader never sees half
// of a server's list. When two servers produce the same registry name the
// one registered last wins (and the shadowing is logged); the other comes
// back if the winner goes away.
type Registry struct {
	logger *slog.Logger

	mu      sync.Mutex // serialises writers
	seq     uint64
	servers map[string]serverTools
	subs    map[*Subscription]struct{}
	closed  bool

	snap atomic.Pointer[snapshot]
}

type serverTools struct {
	seq   uint64 // registration order, for "last registered wins"
	tools []Tool
}

// snapshot is immutable once published. byName indexes sorted (a Tool is
// large, and the registry already holds each one per server: a second
// copy per name was ~6 KiB per server of the example's tools, P2).
type snapshot struct {
	version uint64
	byName  map[string]int
	sorted  []Tool
}

// get returns the tool registered under name.
func (s *snapshot) get(name string) (Tool, bool) {
	i, ok := s.byName[name]
	if !ok {
		return Tool{}, false
	}
	return s.sorted[i], true
}

// NewRegistry returns an empty registry that logs collisions to logger
// (nil: discard).
func NewRegistry(logger *slog.Logger) *Registry {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	r := &Registry{logger: logger, servers: map[string]serverTools{}, subs: map[*Subscription]struct{}{}}
	r.snap.Store(&snapshot{byName: map[string]int{}})
	return r
}

// List returns every registered tool sorted by name. The order is stable:
// it depends only on the set of tools, never on connect timing.
func (r *Registry) List() []Tool {
	return slices.Clone(r.snap.Load().sorted)
}

// Get returns the tool registered under name.
func (r *Registry) Get(name string) (Tool, bool) {
	return r.snap.Load().get(name)
}

// Version increases with every change of the visible tool set.
func (r *Registry) Version() uint64 { return r.snap.Load().version }

// ServerTools returns the tools a server registered (including any shadowed
// by another server), in the server's order.
func (r *Registry) ServerTools(server string) []Tool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.servers[server].tools)
}

// SetServer replaces all tools of server with tools. An empty list removes
// the server. It fails after Close.
func (r *Registry) SetServer(server string, tools []Tool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return ErrRegistryClosed
	}
	if len(tools) == 0 {
		r.removeLocked(server)
		return nil
	}
	r.seq++
	r.servers[server] = serverTools{seq: r.seq, tools: slices.Clone(tools)}
	old := r.snap.Load()
	var logged map[string]bool // a name twice in tools is one collision
	for _, t := range tools {
		if prev, ok := old.get(t.Name); ok && prev.Server != server && !logged[t.Name] {
			if logged == nil {
				logged = map[string]bool{}
			}
			logged[t.Name] = true
			r.logger.Warn("tool name collision: last registered wins", "tool", t.Name, "kept", server, "shadowed", prev.Server)
		}
	}
	r.publishLocked()
	return nil
}

// RemoveServer unregisters every tool of server.
func (r *Registry) RemoveServer(server string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.removeLocked(server)
}

// Close unregisters everything and refuses later registrations.
func (r *Registry) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	if len(r.servers) > 0 {
		clear(r.servers)
		r.publishLocked()
	}
}

func (r *Registry) removeLocked(server string) {
	if _, ok := r.servers[server]; !ok {
		return
	}
	delete(r.servers, server)
	r.publishLocked()
}

// publishLocked rebuilds the visible snapshot. Changes are rare (connects,
// restarts, list_changed), so a full rebuild keeps the read path trivial.
func (r *Registry) publishLocked() {
	old := r.snap.Load()
	byName := make(map[string]Tool, len(old.byName))
	owner := make(map[string]uint64, len(old.byName))
	for _, st := range r.servers {
		for _, t := range st.tools {
			if seq, taken := owner[t.Name]; taken && seq > st.seq {
				continue
			}
			byName[t.Name] = t
			owner[t.Name] = st.seq
		}
	}
	sorted := make([]Tool, 0, len(byName))
	for _, t := range byName {
		sorted = append(sorted, t)
	}
	slices.SortFunc(sorted, func(a, b Tool) int { return strings.Compare(a.Name, b.Name) })
	index := make(map[string]int, len(sorted))
	for i, t := range sorted {
		index[t.Name] = i
	}
	r.snap.Store(&snapshot{version: old.version + 1, byName: index, sorted: sorted})
	for s := range r.subs {
		s.notify()
	}
}

// Subscription tells a host that the tool set changed. Notifications are
// coalesced: C holds at most one pending signal, and the host reads the
// current set with List. A slow host never blocks the registry.
type Subscription struct {
	// C receives a value after every change (coalesced).
	C <-chan struct{}
	c chan struct{}
	r *Registry
}

// Subscribe starts a subscription; Close it when done.
func (r *Registry) Subscribe() *Subscription {
	c := make(chan struct{}, 1)
	s := &Subscription{C: c, c: c, r: r}
	r.mu.Lock()
	r.subs[s] = struct{}{}
	r.mu.Unlock()
	return s
}

// Close ends the subscription. C is not closed, so a select on it simply
// never fires again.
func (s *Subscription) Close() {
	s.r.mu.Lock()
	delete(s.r.subs, s)
	s.r.mu.Unlock()
}

func (s *Subscription) notify() {
	select {
	case s.c <- struct{}{}:
	default:
	}
}
