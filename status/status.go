// Package status holds what the runtime reports about each server: its
// lifecycle state, error, tool count and the last lines of its stderr.
// The Board is the reducer of the runtime's event stream and the only
// writer of status: actors emit events, never statuses. Readers (the
// runtime's Status, the management API) never wait for an actor.
package status

import (
	"sync"
	"time"

	"github.com/openprogram/mcpvisor/events"
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
	// KindUnresponsive: the session was ended because the server stopped
	// answering (runtime.Options.KeepAlive); it restarts like a lost one.
	KindUnresponsive = "unresponsive"
)

// Server is one server's status.
type Server struct {
	Name      string `json:"name"`
	State     State  `json:"state"`
	Ready     bool   `json:"ready"`
	Error     string `json:"error"`
	ErrorKind string `json:"error_kind"`
	ToolCount int    `json:"tool_count"`
	// ToolsFiltered is the number of the server's tools its tools filter
	// leaves out (listed by the server or a resource or prompt tool the
	// runtime would add, not registered; see config.ToolFilter).
	ToolsFiltered int `json:"tools_filtered"`
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
	// StartingDetail is the last stderr line of a server still starting
	// whose process is alive but has not answered initialize yet (an
	// `npx` download): what it is doing, in state starting only.
	StartingDetail string `json:"starting_detail,omitempty"`
	// StderrTail is the server's last stderr lines, oldest first, with known
	// secrets removed.
	StderrTail []string `json:"stderr_tail,omitempty"`

	// ServerInfo, ProtocolVersion and Instructions are what the server
	// said in its last session's initialize (scrubbed and bounded). They
	// outlive the session: while the server is not ready (starting,
	// backoff, failed, …) they are the last known, and Ready false says
	// so; a disabled or removed server has none.
	ServerInfo      *events.ServerInfo `json:"server_info,omitempty"`
	ProtocolVersion string             `json:"protocol_version,omitempty"`
	Instructions    string             `json:"instructions,omitempty"`
}

// Board is the set of server statuses of one runtime, kept by Apply from
// the runtime's events (it is the Bus's Reducer). Safe for concurrent use.
//
// Each fact has one source:
//   - an entry exists from ServerAdded to ServerRemoved, and is shown once
//     its first StateChanged gave it a state;
//   - State, Ready, Since, Error, ErrorKind, LastError and NextRetryAt come
//     from StateChanged;
//   - Restarts is counted here: every move into starting from ready,
//     backoff, failed or needs_auth. A first start, a start after disabled
//     (a disable and an enable) and a login that ends (authorizing back to
//     starting) are not restarts;
//   - PID from SessionStarted, cleared by any move to a state other than
//     ready (not by SessionLost itself, which comes just before the move:
//     a ready server never shows without its pid);
//   - ToolCount and PromptCount from ToolsChanged and PromptsChanged,
//     ToolsFiltered from ToolsChanged;
//   - AuthorizeURL from LoginRequired, cleared when the login ends or the
//     state leaves authorizing;
//   - RequestsRefused counts RequestRefused, emitted or tallied (the one
//     without a Method, a count of events held back (a removed
//     server's last word, or a stopped flood's), is not a refusal);
//   - ConfigError from ConfigRejected, cleared by ConfigSaved and
//     ConfigLoaded;
//   - ServerInfo and ProtocolVersion from SessionStarted, kept while the
//     server is not ready and cleared by a move to disabled;
//   - Instructions from InstructionsChanged; one that says what the
//     board shows already (a reconnect with the same text) is no news:
//     Apply returns nil;
//   - StartingDetail from StartingOutput, taken only in state starting
//     (in any other state the event is no news: Apply returns nil),
//     cleared by every move and by an empty line (a connect begun anew
//     while starting, which no move says);
//   - StderrTail is read live, when the status is, from the tail lookup
//     the Board was made with.
type Board struct {
	tails func(name string) []string

	mu          sync.RWMutex
	entries     map[string]*Server
	configError string
}

// NewBoard returns an empty board. tails, if not nil, returns a server's
// last stderr lines by name (StderrTail); it is called outside the
// board's lock and must not block.
func NewBoard(tails func(name string) []string) *Board {
	return &Board{tails: tails, entries: map[string]*Server{}}
}

// Apply folds one event into the board and returns it completed with what
// only the board knows: a StateChanged gets the From the board showed and
// the Restarts it counted, so that every consumer of the event reads what
// Status() says. A StateChanged identical to what the board shows (state,
// error, error kind and next retry) is no news: Apply returns nil and the
// Bus drops it; so is an InstructionsChanged whose text the board shows
// already, and a StartingOutput of a server not starting. Other events
// are returned as they are.
func (b *Board) Apply(e events.Event) events.Event {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch e := e.(type) {
	case events.ServerAdded:
		b.entries[e.Server] = &Server{Name: e.Server}
	case events.ServerRemoved:
		delete(b.entries, e.Server)
	case events.StateChanged:
		return b.stateChanged(e)
	case events.InstructionsChanged:
		if s := b.entries[e.Server]; s != nil {
			if s.Instructions == e.Instructions {
				return nil
			}
			s.Instructions = e.Instructions
		}
		return e
	case events.ConfigRejected:
		b.configError = e.Error
	case events.ConfigSaved, events.ConfigLoaded:
		b.configError = ""
	}
	s := b.entries[e.Head().Server]
	if s == nil || e.Head().Server == "" {
		return e
	}
	switch e := e.(type) {
	case events.SessionStarted:
		s.PID = e.PID
		// A copy: the event reached the host too, which may change it.
		s.ServerInfo, s.ProtocolVersion = e.ServerInfo.Clone(), e.ProtocolVersion
	case events.SessionLost:
		// PID goes with the state change that follows.
	case events.ToolsChanged:
		s.ToolCount, s.ToolsFiltered = e.Count, e.Filtered
	case events.PromptsChanged:
		s.PromptCount = e.Count
	case events.LoginRequired:
		s.AuthorizeURL = e.AuthorizeURL
	case events.LoginCompleted, events.LoginFailed:
		s.AuthorizeURL = ""
	case events.RequestRefused:
		if e.Method != "" { // not a count of refusals held back
			s.RequestsRefused++
		}
	case events.StartingOutput:
		if s.State != Starting {
			return nil // the connect ended: its last words are stale
		}
		s.StartingDetail = e.Line
	}
	return e
}

// RestartedFrom says whether a move into starting from s is a restart (what
// Server.Restarts counts).
func RestartedFrom(s State) bool {
	switch s {
	case Ready, Backoff, Failed, NeedsAuth:
		return true
	}
	return false
}

func (b *Board) stateChanged(e events.StateChanged) events.Event {
	s := b.entries[e.Server]
	if s == nil {
		return e // a server that is gone (a stopping actor's last word)
	}
	from, to := s.State, State(e.To)
	if from == to && !s.Since.IsZero() && s.Error == e.Error && s.ErrorKind == e.ErrorKind && sameRetry(s.NextRetryAt, e.NextRetryAt) {
		// What the board shows already (the manager and the actor both
		// showing a start, say): no news, so no event.
		return nil
	}
	if to == Starting && RestartedFrom(from) {
		s.Restarts++
	}
	if from != to || s.Since.IsZero() {
		s.Since = e.Time
	}
	s.State, s.Ready = to, to == Ready
	s.StartingDetail = ""
	s.Error, s.ErrorKind = e.Error, e.ErrorKind
	if e.Error != "" && to != Starting {
		s.LastError = e.Error
	}
	s.NextRetryAt = nil
	if !e.NextRetryAt.IsZero() {
		next := e.NextRetryAt
		s.NextRetryAt = &next
	}
	if to != Ready {
		s.PID = 0
	}
	if to != Authorizing {
		s.AuthorizeURL = ""
	}
	if to == Disabled {
		s.ServerInfo, s.ProtocolVersion = nil, ""
	}
	e.From, e.Restarts = string(from), s.Restarts
	return e
}

func sameRetry(shown *time.Time, next time.Time) bool {
	if shown == nil {
		return next.IsZero()
	}
	return shown.Equal(next)
}

// Get returns one server's status; false for a server the board does not
// hold or that has no state yet.
func (b *Board) Get(name string) (Server, bool) {
	b.mu.RLock()
	p := b.entries[name]
	var s Server
	if p != nil {
		s = *p
		s.ServerInfo = p.ServerInfo.Clone() // the caller may change its copy
	}
	b.mu.RUnlock()
	if p == nil || s.State == "" {
		return Server{}, false
	}
	if b.tails != nil {
		s.StderrTail = b.tails(name)
	}
	return s, true
}

// State returns one server's state alone, without copying its status;
// false as Get says. The servers gauge of the metrics reads it.
func (b *Board) State(name string) (State, bool) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if p := b.entries[name]; p != nil && p.State != "" {
		return p.State, true
	}
	return "", false
}

// ConfigError is why the config file cannot be used, or "".
func (b *Board) ConfigError() string {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.configError
}
