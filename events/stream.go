package events

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"time"
)

// Type names of the stream's own events.
const (
	TypeServerLog = "server_log"
	TypeDropped   = "dropped"
)

// ServerLog levels that are not MCP's.
const (
	// LevelStderr is the level of a line of a stdio server's stderr.
	LevelStderr = "stderr"
	// LevelUnknown stands for a level MCP does not define: the server's
	// own value is not passed on.
	LevelUnknown = "unknown"
)

// ServerLog is one log line from a server: an MCP log notification or a
// line of a stdio server's stderr. A Bus never keeps it in its history, so
// a chatty server cannot push lifecycle events out of it; the emitter
// rate-limits these at the source.
type ServerLog struct {
	Header
	// Level is the MCP log level ("debug", "info", "notice", "warning",
	// "error", "critical", "alert", "emergency"); "unknown" for a level
	// MCP does not define (the server's value is not passed on); "stderr"
	// for a stderr line.
	Level string
	// Logger is the name the server gave its logger, scrubbed; empty for
	// a stderr line or when it gave none.
	Logger string
	// Text is the line, scrubbed of secrets.
	Text string
}

// Type implements Event.
func (ServerLog) Type() string { return TypeServerLog }

// LogLevel is the slog level a log renders the line at: debug for
// "debug", info for "info", "notice" and a stderr line, warn for
// "warning", and error for "error" and above (and for "unknown", a level
// MCP does not define, so that nothing unknown is logged quietly).
func (e ServerLog) LogLevel() slog.Level {
	switch e.Level {
	case "debug":
		return slog.LevelDebug
	case "info", "notice", LevelStderr:
		return slog.LevelInfo
	case "warning":
		return slog.LevelWarn
	}
	return slog.LevelError // error, critical, alert, emergency
}

func (e ServerLog) String() string {
	if e.Logger != "" {
		return e.prefix() + "[" + e.Level + "] " + e.Logger + ": " + e.Text
	}
	return e.prefix() + "[" + e.Level + "] " + e.Text
}

// MarshalJSON implements json.Marshaler.
func (e ServerLog) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		wireHeader
		Level  string `json:"level"`
		Logger string `json:"logger,omitempty"`
		Text   string `json:"text"`
	}{e.wire(TypeServerLog), e.Level, e.Logger, e.Text})
}

func (e ServerLog) stamp(seq uint64, t time.Time) Event { e.Seq, e.Time = seq, t; return e }

// Dropped stands, in one subscription, for N events it did not get: its
// buffer was full, or it asked to start from a sequence number the
// history no longer holds. It is never emitted on a Bus; the
// subscription makes it.
//
// Seq is that of the last event it stands for (so resuming after a
// Dropped's Seq continues right after the gap) and Time is that event's.
// After a full buffer N is exact; after a resume from too far back it is
// the number of sequence numbers that can no longer be replayed, which
// counts server log lines and, with a server filter, other servers' events
// too (an upper bound).
type Dropped struct {
	Header
	N uint64
}

// Type implements Event.
func (Dropped) Type() string { return TypeDropped }

func (e Dropped) String() string { return e.prefix() + fmt.Sprintf("dropped %d events", e.N) }

// MarshalJSON implements json.Marshaler.
func (e Dropped) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		wireHeader
		N uint64 `json:"n"`
	}{e.wire(TypeDropped), e.N})
}

func (e Dropped) stamp(seq uint64, t time.Time) Event { e.Seq, e.Time = seq, t; return e }
