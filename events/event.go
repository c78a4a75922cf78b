package events

import (
	"encoding/json"
	"strconv"
	"time"
)

// Event is one typed event. The set is closed: only the types of this
// package implement it (see the list in the package doc), so a consumer's
// type switch can be complete and a reviewer can see every field that
// leaves the runtime.
//
// Events are values. A Bus stamps Seq and Time on its own copy; the
// emitter fills the rest, and must not change a slice it passed in
// (Added, Removed) after Emit.
type Event interface {
	// Type is the snake_case name of the event ("state_changed"), the
	// same as the "type" member of its JSON.
	Type() string
	// Head returns the common header.
	Head() Header
	// String is a one-line human reading, for logs and tests.
	String() string
	json.Marshaler

	// stamp returns a copy with seq and t set; it also closes the set.
	stamp(seq uint64, t time.Time) Event
}

// Header is embedded in every event.
type Header struct {
	// Server is the server the event is about; empty for events about
	// the runtime as a whole (ConfigSaved, an ActorPanicked above the
	// servers, Dropped).
	Server string
	// Time is when the Bus accepted the event (its clock).
	Time time.Time
	// Seq is the Bus's sequence number: 1 for the first event, one more
	// for each later one, in the order every consumer sees them.
	Seq uint64
}

// Head returns h itself, so that every event type has it.
func (h Header) Head() Header { return h }

// wireHeader is the JSON every event starts with. Server is always
// present (possibly empty) so a consumer need not test for it.
type wireHeader struct {
	Seq    uint64    `json:"seq"`
	Type   string    `json:"type"`
	Server string    `json:"server"`
	Time   time.Time `json:"time"`
}

func (h Header) wire(typ string) wireHeader {
	return wireHeader{Seq: h.Seq, Type: typ, Server: h.Server, Time: h.Time}
}

// prefix is the start of every String(): "#12 fs: ", or "#12 " for an
// event without a server.
func (h Header) prefix() string {
	p := "#" + strconv.FormatUint(h.Seq, 10) + " "
	if h.Server != "" {
		p += h.Server + ": "
	}
	return p
}

// withError appends ": err" when err is set.
func withError(s, err string) string {
	if err == "" {
		return s
	}
	return s + ": " + err
}
