package events

import (
	"encoding/json"
	"time"
)

// TypeResourcesChanged is the type name of ResourcesChanged.
const TypeResourcesChanged = "resources_changed"

// ResourcesChanged says a server announced that its list of resources or
// resource templates changed (notifications/resources/list_changed). The
// runtime registers no resources, so nothing of it changed in the
// runtime: a host that lists resources (the gateway does) lists them
// again. A server sends these as often as it likes, so, like
// ResourceUpdated, they are coalesced (at most one per server per 250 ms:
// the first at once, the rest of the interval as one at its end) and
// never kept in the Bus's history.
type ResourcesChanged struct {
	Header
}

// Type implements Event.
func (ResourcesChanged) Type() string { return TypeResourcesChanged }

func (e ResourcesChanged) String() string { return e.prefix() + "resource list changed" }

// MarshalJSON implements json.Marshaler.
func (e ResourcesChanged) MarshalJSON() ([]byte, error) {
	return json.Marshal(e.wire(TypeResourcesChanged))
}

func (e ResourcesChanged) stamp(seq uint64, t time.Time) Event { e.Seq, e.Time = seq, t; return e }
