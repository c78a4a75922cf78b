package events

import (
	"encoding/json"
	"time"
)

// TypeResourceUpdated is the type name of ResourceUpdated.
const TypeResourceUpdated = "resource_updated"

// ResourceUpdated says a server announced a change of a resource the host
// subscribed to (notifications/resources/updated): read it again to see
// the change. Only URIs with a live subscription become events. A server
// sends these as often as it likes, so, like ServerLog, they are never
// kept in the Bus's history: a subscriber resuming from a sequence number
// re-reads the resources it cares about instead.
type ResourceUpdated struct {
	Header
	// URI is the resource's URI as the server sent it, scrubbed and cut
	// to a bounded length.
	URI string
}

// Type implements Event.
func (ResourceUpdated) Type() string { return TypeResourceUpdated }

func (e ResourceUpdated) String() string { return e.prefix() + "resource updated: " + e.URI }

// MarshalJSON implements json.Marshaler.
func (e ResourceUpdated) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		wireHeader
		URI string `json:"uri"`
	}{e.wire(TypeResourceUpdated), e.URI})
}

func (e ResourceUpdated) stamp(seq uint64, t time.Time) Event { e.Seq, e.Time = seq, t; return e }
