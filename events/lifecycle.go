package events

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Type names of the lifecycle events.
const (
	TypeServerAdded    = "server_added"
	TypeServerRemoved  = "server_removed"
	TypeStateChanged   = "state_changed"
	TypeSessionStarted = "session_started"
	TypeSessionLost    = "session_lost"
)

// ServerAdded says a server entered the runtime's configuration.
type ServerAdded struct {
	Header
}

// Type implements Event.
func (ServerAdded) Type() string { return TypeServerAdded }

func (e ServerAdded) String() string { return e.prefix() + "added" }

// MarshalJSON implements json.Marshaler.
func (e ServerAdded) MarshalJSON() ([]byte, error) {
	return json.Marshal(e.wire(TypeServerAdded))
}

func (e ServerAdded) stamp(seq uint64, t time.Time) Event { e.Seq, e.Time = seq, t; return e }

// ServerRemoved says a server left the configuration; its actors are
// stopped.
type ServerRemoved struct {
	Header
}

// Type implements Event.
func (ServerRemoved) Type() string { return TypeServerRemoved }

func (e ServerRemoved) String() string { return e.prefix() + "removed" }

// MarshalJSON implements json.Marshaler.
func (e ServerRemoved) MarshalJSON() ([]byte, error) {
	return json.Marshal(e.wire(TypeServerRemoved))
}

func (e ServerRemoved) stamp(seq uint64, t time.Time) Event { e.Seq, e.Time = seq, t; return e }

// StateChanged says a server moved from one lifecycle state to another
// (the values of status.State: "starting", "ready", "backoff", …).
type StateChanged struct {
	Header
	// From is the state the status board showed before, and To the state
	// it shows now. The emitter sets To; the board (the Bus's reducer)
	// fills in From, so that a subscriber reads the same transition as
	// Status() made.
	From, To string
	// Error says why, already scrubbed of secrets; empty when none.
	Error string
	// ErrorKind is one of the status.Kind* values; empty when none.
	ErrorKind string
	// NextRetryAt is when the next start is due; zero unless To is
	// "backoff".
	NextRetryAt time.Time
	// Restarts is how many times the server has been restarted, as the
	// status board counts them (it fills this in): every move into
	// "starting" from ready, backoff, failed or needs_auth.
	Restarts int
}

// Type implements Event.
func (StateChanged) Type() string { return TypeStateChanged }

func (e StateChanged) String() string {
	s := e.prefix() + "state " + e.From + " -> " + e.To
	var notes []string
	if e.Restarts > 0 {
		notes = append(notes, fmt.Sprintf("restarts %d", e.Restarts))
	}
	if !e.NextRetryAt.IsZero() {
		notes = append(notes, "next retry "+e.NextRetryAt.UTC().Format(time.RFC3339Nano))
	}
	if e.ErrorKind != "" {
		notes = append(notes, e.ErrorKind)
	}
	if len(notes) > 0 {
		s += " (" + strings.Join(notes, ", ") + ")"
	}
	return withError(s, e.Error)
}

// MarshalJSON implements json.Marshaler.
func (e StateChanged) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		wireHeader
		From        string    `json:"from"`
		To          string    `json:"to"`
		Error       string    `json:"error,omitempty"`
		ErrorKind   string    `json:"error_kind,omitempty"`
		NextRetryAt time.Time `json:"next_retry_at,omitzero"`
		Restarts    int       `json:"restarts"`
	}{e.wire(TypeStateChanged), e.From, e.To, e.Error, e.ErrorKind, e.NextRetryAt, e.Restarts})
}

func (e StateChanged) stamp(seq uint64, t time.Time) Event { e.Seq, e.Time = seq, t; return e }

// SessionStarted says a server's MCP session is initialised, and who
// the server said it is.
type SessionStarted struct {
	Header
	// PID is the stdio server's process id; 0 for a remote server.
	PID int
	// ProtocolVersion is the MCP version the server negotiated.
	ProtocolVersion string
	// ServerInfo is who the server says it is; nil if it sent nothing.
	ServerInfo *ServerInfo
}

// Type implements Event.
func (SessionStarted) Type() string { return TypeSessionStarted }

func (e SessionStarted) String() string {
	s := e.prefix() + "session started"
	if e.PID != 0 {
		s += fmt.Sprintf(" (pid %d)", e.PID)
	}
	if e.ProtocolVersion != "" {
		s += " protocol " + e.ProtocolVersion
	}
	if i := e.ServerInfo; i != nil {
		s += " server " + i.Name
		if i.Version != "" {
			s += " " + i.Version
		}
	}
	return s
}

// MarshalJSON implements json.Marshaler.
func (e SessionStarted) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		wireHeader
		PID             int         `json:"pid,omitempty"`
		ProtocolVersion string      `json:"protocol_version"`
		ServerInfo      *ServerInfo `json:"server_info,omitempty"`
	}{e.wire(TypeSessionStarted), e.PID, e.ProtocolVersion, e.ServerInfo})
}

func (e SessionStarted) stamp(seq uint64, t time.Time) Event { e.Seq, e.Time = seq, t; return e }

// SessionLost says a server's session ended without us asking.
type SessionLost struct {
	Header
	// Error says how, scrubbed of secrets.
	Error string
	// ExitStatus is the stdio process's exit as Go reads it ("exit status
	// 1", "signal: killed"); empty for a remote server or when unknown.
	ExitStatus string
}

// Type implements Event.
func (SessionLost) Type() string { return TypeSessionLost }

func (e SessionLost) String() string {
	s := e.prefix() + "session lost"
	if e.ExitStatus != "" {
		s += " (" + e.ExitStatus + ")"
	}
	return withError(s, e.Error)
}

// MarshalJSON implements json.Marshaler.
func (e SessionLost) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		wireHeader
		Error      string `json:"error,omitempty"`
		ExitStatus string `json:"exit_status,omitempty"`
	}{e.wire(TypeSessionLost), e.Error, e.ExitStatus})
}

func (e SessionLost) stamp(seq uint64, t time.Time) Event { e.Seq, e.Time = seq, t; return e }
