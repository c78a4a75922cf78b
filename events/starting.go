package events

import (
	"encoding/json"
	"time"
)

// TypeStartingOutput is the type name of StartingOutput.
const TypeStartingOutput = "starting_output"

// StartingOutput says what a server that is still connecting (alive, not
// yet initialized: an `npx` download, a slow build) last wrote to its
// stderr. The status board shows it as the server's starting detail until
// the connect ends. The emitter sends at most a few a second per server,
// always the newest line; like ServerLog, they are never kept in the Bus's
// history.
type StartingOutput struct {
	Header
	// Line is the server's last stderr line, scrubbed and cut to a bounded
	// length as in the stderr tail. Empty: a connect began anew while the
	// server was starting (a restart or an edit), and has written nothing
	// yet; the previous connect's line no longer applies.
	Line string
}

// Type implements Event.
func (StartingOutput) Type() string { return TypeStartingOutput }

func (e StartingOutput) String() string { return e.prefix() + "starting: " + e.Line }

// MarshalJSON implements json.Marshaler.
func (e StartingOutput) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		wireHeader
		Line string `json:"line"`
	}{e.wire(TypeStartingOutput), e.Line})
}

func (e StartingOutput) stamp(seq uint64, t time.Time) Event { e.Seq, e.Time = seq, t; return e }
