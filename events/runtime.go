package events

import (
	"encoding/json"
	"fmt"
	"time"
)

// Type names of the runtime's own events.
const (
	TypeActorPanicked  = "actor_panicked"
	TypeConfigSaved    = "config_saved"
	TypeConfigRejected = "config_rejected"
	TypeConfigLoaded   = "config_loaded"
	TypeRequestRefused = "request_refused"
)

// ActorPanicked says an actor panicked and its parent restarts it.
type ActorPanicked struct {
	Header
	// Path is the actor's place in the tree ("manager/fs/session").
	Path string
	// Value is the panic value as text, scrubbed of secrets.
	Value string
}

// Type implements Event.
func (ActorPanicked) Type() string { return TypeActorPanicked }

func (e ActorPanicked) String() string {
	return e.prefix() + "actor " + e.Path + " panicked: " + e.Value
}

// MarshalJSON implements json.Marshaler.
func (e ActorPanicked) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		wireHeader
		Path  string `json:"path"`
		Value string `json:"value"`
	}{e.wire(TypeActorPanicked), e.Path, e.Value})
}

func (e ActorPanicked) stamp(seq uint64, t time.Time) Event { e.Seq, e.Time = seq, t; return e }

// ConfigSaved says the configuration file was written.
type ConfigSaved struct {
	Header
}

// Type implements Event.
func (ConfigSaved) Type() string { return TypeConfigSaved }

func (e ConfigSaved) String() string { return e.prefix() + "config saved" }

// MarshalJSON implements json.Marshaler.
func (e ConfigSaved) MarshalJSON() ([]byte, error) {
	return json.Marshal(e.wire(TypeConfigSaved))
}

func (e ConfigSaved) stamp(seq uint64, t time.Time) Event { e.Seq, e.Time = seq, t; return e }

// ConfigRejected says the configuration file could not be used; the
// runtime keeps the configuration it had.
type ConfigRejected struct {
	Header
	// Error is the parse or validation error, naming what is wrong.
	Error string
}

// Type implements Event.
func (ConfigRejected) Type() string { return TypeConfigRejected }

func (e ConfigRejected) String() string { return withError(e.prefix()+"config rejected", e.Error) }

// MarshalJSON implements json.Marshaler.
func (e ConfigRejected) MarshalJSON() ([]byte, error) {
	return marshalError(e.wire(TypeConfigRejected), e.Error)
}

func (e ConfigRejected) stamp(seq uint64, t time.Time) Event { e.Seq, e.Time = seq, t; return e }

// ConfigLoaded says the configuration file, rejected before, was read
// again and parses: the runtime may write it again. (A file that was
// good all along gets no event for each read.)
type ConfigLoaded struct {
	Header
}

// Type implements Event.
func (ConfigLoaded) Type() string { return TypeConfigLoaded }

func (e ConfigLoaded) String() string { return e.prefix() + "config loaded" }

// MarshalJSON implements json.Marshaler.
func (e ConfigLoaded) MarshalJSON() ([]byte, error) {
	return json.Marshal(e.wire(TypeConfigLoaded))
}

func (e ConfigLoaded) stamp(seq uint64, t time.Time) Event { e.Seq, e.Time = seq, t; return e }

// RequestRefused says the runtime refused a request a server sent it
// (sampling, elicitation) because a limit said no. A server can be
// refused as often as it asks, so these are, like ServerLog, kept out of
// the Bus's history and rate-limited at their source: each server's
// first 100, then one a second; the status counts every refusal at once
// all the same (see Bus.Tally), and the next one delivered says how many
// were held back.
type RequestRefused struct {
	Header
	// Method is the request's MCP method ("sampling/createMessage");
	// empty in an event that only carries Suppressed: a removed server's
	// last word, or the count held back when a flood stopped (said at the
	// source's next slot).
	Method string
	// Limit names the limit that refused it: "max_concurrent" (too many
	// of the server's requests in flight), "max_bytes" (the request is
	// too large) or "rate" (too many per second).
	Limit string
	// Suppressed is how many refusals of this server since the previous
	// RequestRefused delivered were counted in the status but not
	// delivered.
	Suppressed int
}

// Type implements Event.
func (RequestRefused) Type() string { return TypeRequestRefused }

func (e RequestRefused) String() string {
	s := e.prefix() + fmt.Sprintf("refused %s (%s)", e.Method, e.Limit)
	if e.Method == "" {
		s = e.prefix() + "refused requests"
	}
	if e.Suppressed > 0 {
		s += fmt.Sprintf(", %d more not shown", e.Suppressed)
	}
	return s
}

// MarshalJSON implements json.Marshaler.
func (e RequestRefused) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		wireHeader
		Method     string `json:"method,omitempty"`
		Limit      string `json:"limit,omitempty"`
		Suppressed int    `json:"suppressed,omitempty"`
	}{e.wire(TypeRequestRefused), e.Method, e.Limit, e.Suppressed})
}

func (e RequestRefused) stamp(seq uint64, t time.Time) Event { e.Seq, e.Time = seq, t; return e }
