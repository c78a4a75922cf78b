// Package status holds what the runtime reports about each server: its
// lifecycle state, error, tool count and the last lines of its stderr.
// Server actors write their own entry; readers (the runtime's Status, the
// management API) never wait for an actor.
package status

import (
	"slices"
	"sync"
	"time"
)

// State is where a server is in its lifecycle.
type State string

// States a server can be in.
const (
	// Starting: not ready yet; its turn in startup may still be coming, or
	// its connect is in progress.
	Starting State = "starting"
	// Ready: connected and its tools are registered.
	Ready State = "ready"
	// Failed: the connect failed or the session was lost; Error says why.
	Failed State = "failed"
	// Disabled: enabled=false in the config; no process, no tools.
	Disabled State = "disabled"
	// Stopped: the runtime shut down; no process, no tools.
	Stopped State = "stopped"
	// Backoff: the session was lost; a new one starts at NextRetryAt.
	Backoff State = "backoff"
	// Authorizing: an OAuth login waits for the user in the browser, at
	// AuthorizeURL.
	Authorizing State = "authorizing"
	// NeedsAuth: the server needs the user to log in (a refused refresh, a
	// login that failed or timed out). Nothing retries it: a restart
	// starts a login.
	NeedsAuth State = "needs_auth"
)

// Kinds of error, for hosts that react to a class of failure rather than
// parse a message.
const (
	KindInvalidConfig   = "invalid_config"
	KindCommandNotFound = "command_not_found"
	KindTimeout         = "timeout"
	KindConnectFailed   = "connect_failed"
	KindSessionLost     = "session_lost"
	KindNeedsReauth     = "needs_reauth"
)

// Server is one server's status.
type Server struct {
	Name      string `json:"name"`
	State     State  `json:"state"`
	Ready     bool   `json:"ready"`
	Error     string `json:"error"`
	ErrorKind string `json:"error_kind"`
	ToolCount int    `json:"tool_count"`
	// PromptCount is the number of the server's prompts in the registry.
	PromptCount int       `json:"prompt_count"`
	Restarts    int       `json:"restarts"`
	Since       time.Time `json:"since"`
	// LastError is why the last session ended or the last attempt failed,
	// kept while the server recovers.
	LastError string `json:"last_error,omitempty"`
	// NextRetryAt is when the next attempt starts, in state backoff.
	NextRetryAt *time.Time `json:"next_retry_at,omitempty"`
	PID         int        `json:"pid,omitempty"`
	// AuthorizeURL is where the user logs in, in state authorizing: a host
	// shows it in case the browser did not open.
	AuthorizeURL string `json:"authorize_url,omitempty"`
	// RequestsRefused counts the server's sampling and elicitation
	// requests refused for going over a limit (runtime.ServerRequestLimits).
	RequestsRefused int `json:"requests_refused"`
	// StderrTail is the server's last stderr lines, oldest first, with known
	// secrets removed.
	StderrTail []string `json:"stderr_tail,omitempty"`
}

// Board is the set of server statuses of one runtime. Safe for concurrent
// use.
type Board struct {
	mu      sync.RWMutex
	entries map[string]entry
	order   []string
	// configured holds the names of the last SetOrder. order is exactly
	// those plus the other names in entries, so membership needs no scan
	// (a runtime may have 10 000 servers).
	configured map[string]bool
}

type entry struct {
	server  Server
	tail    func() []string
	refused int // RequestsRefused: counted here, not by the entry's writer
}

// NewBoard returns an empty board.
func NewBoard() *Board { return &Board{entries: map[string]entry{}} }

// Set publishes a server's status. tail, if not nil, is read when the
// status is; it supplies StderrTail.
func (b *Board) Set(s Server, tail func() []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.entries[s.Name]; !ok && !b.configured[s.Name] {
		b.order = append(b.order, s.Name)
	}
	b.entries[s.Name] = entry{server: s, tail: tail, refused: b.entries[s.Name].refused}
}

// CountRefused counts one refused request of a server (RequestsRefused);
// a server not on the board is ignored.
func (b *Board) CountRefused(name string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if e, ok := b.entries[name]; ok {
		e.refused++
		b.entries[name] = e
	}
}

// Delete removes a server.
func (b *Board) Delete(name string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.entries, name)
	if !b.configured[name] { // a configured name keeps its place
		b.order = slices.DeleteFunc(b.order, func(n string) bool { return n == name })
	}
}

// SetOrder sets the listing order (the config's order); names not in it
// are listed after, in the order they first appeared.
func (b *Board) SetOrder(names []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	configured := make(map[string]bool, len(names))
	for _, n := range names {
		configured[n] = true
	}
	rest := slices.DeleteFunc(slices.Clone(b.order), func(n string) bool {
		_, set := b.entries[n]
		return configured[n] || !set // !set: only in an older config
	})
	b.configured = configured
	b.order = append(slices.Clone(names), rest...)
}

// Get returns one server's status.
func (b *Board) Get(name string) (Server, bool) {
	b.mu.RLock()
	e, ok := b.entries[name]
	b.mu.RUnlock()
	if !ok {
		return Server{}, false
	}
	return e.resolve(), true
}

// List returns every server's status in order.
func (b *Board) List() []Server {
	b.mu.RLock()
	out := make([]entry, 0, len(b.order))
	for _, n := range b.order {
		if e, ok := b.entries[n]; ok {
			out = append(out, e)
		}
	}
	b.mu.RUnlock()
	servers := make([]Server, len(out))
	for i, e := range out {
		servers[i] = e.resolve()
	}
	return servers
}

func (e entry) resolve() Server {
	s := e.server
	s.RequestsRefused = e.refused
	if e.tail != nil {
		s.StderrTail = e.tail()
	}
	return s
}
