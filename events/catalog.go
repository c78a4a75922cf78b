package events

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Type names of the catalog events.
const (
	TypeToolsChanged   = "tools_changed"
	TypePromptsChanged = "prompts_changed"
)

// ToolsChanged says a server's tool list was (re)read: at a session start
// and after the server announced a change.
type ToolsChanged struct {
	Header
	// Count is the number of tools the server now offers.
	Count int
	// Added and Removed name the tools that appeared and went away since
	// the last listing (all of them, at the first), sorted, at most
	// MaxNames each; AddedMore and RemovedMore count the names left out,
	// so a server with a huge list cannot make every event (and the
	// history) huge.
	Added, Removed         []string
	AddedMore, RemovedMore int
	// Filtered is the number of the server's tools its tools filter
	// (allow/deny globs in the config) leaves out: listed, not registered.
	Filtered int
}

// Type implements Event.
func (ToolsChanged) Type() string { return TypeToolsChanged }

func (e ToolsChanged) String() string {
	s := e.prefix() + catalogString("tools", e.Count, e.Added, e.Removed, e.AddedMore, e.RemovedMore)
	if e.Filtered > 0 {
		s += fmt.Sprintf(" (%d filtered out)", e.Filtered)
	}
	return s
}

// MarshalJSON implements json.Marshaler.
func (e ToolsChanged) MarshalJSON() ([]byte, error) {
	return marshalCatalog(e.wire(TypeToolsChanged), e.Count, e.Added, e.Removed, e.AddedMore, e.RemovedMore, &e.Filtered)
}

func (e ToolsChanged) stamp(seq uint64, t time.Time) Event { e.Seq, e.Time = seq, t; return e }

// PromptsChanged is ToolsChanged for prompts.
type PromptsChanged struct {
	Header
	// Count is the number of prompts the server now offers.
	Count int
	// Added and Removed name the prompts that appeared and went away, by
	// their registry names, capped as ToolsChanged's.
	Added, Removed         []string
	AddedMore, RemovedMore int
}

// Type implements Event.
func (PromptsChanged) Type() string { return TypePromptsChanged }

func (e PromptsChanged) String() string {
	return e.prefix() + catalogString("prompts", e.Count, e.Added, e.Removed, e.AddedMore, e.RemovedMore)
}

// MarshalJSON implements json.Marshaler.
func (e PromptsChanged) MarshalJSON() ([]byte, error) {
	return marshalCatalog(e.wire(TypePromptsChanged), e.Count, e.Added, e.Removed, e.AddedMore, e.RemovedMore, nil)
}

func (e PromptsChanged) stamp(seq uint64, t time.Time) Event { e.Seq, e.Time = seq, t; return e }

// MaxNames is how many names a ToolsChanged or PromptsChanged carries in
// each of Added and Removed; the rest are only counted.
const MaxNames = 100

// CapNames cuts names to MaxNames and says how many it left out. The
// kept names are a copy, so an event in the history does not hold the
// whole list alive.
func CapNames(names []string) (kept []string, more int) {
	if len(names) <= MaxNames {
		return names, 0
	}
	return slices.Clone(names[:MaxNames]), len(names) - MaxNames
}

func catalogString(what string, count int, added, removed []string, addedMore, removedMore int) string {
	s := fmt.Sprintf("%d %s", count, what)
	if len(added) > 0 {
		s += " +" + strings.Join(added, " +")
	}
	if addedMore > 0 {
		s += fmt.Sprintf(" (+%d more)", addedMore)
	}
	if len(removed) > 0 {
		s += " -" + strings.Join(removed, " -")
	}
	if removedMore > 0 {
		s += fmt.Sprintf(" (-%d more)", removedMore)
	}
	return s
}

// marshalCatalog writes empty lists as [] rather than null, so a consumer
// can always range over them; filtered is the tools' count (nil: none).
func marshalCatalog(h wireHeader, count int, added, removed []string, addedMore, removedMore int, filtered *int) ([]byte, error) {
	if added == nil {
		added = []string{}
	}
	if removed == nil {
		removed = []string{}
	}
	return json.Marshal(struct {
		wireHeader
		Count       int      `json:"count"`
		Added       []string `json:"added"`
		AddedMore   int      `json:"added_more,omitempty"`
		Removed     []string `json:"removed"`
		RemovedMore int      `json:"removed_more,omitempty"`
		Filtered    *int     `json:"filtered,omitempty"`
	}{h, count, added, addedMore, removed, removedMore, filtered})
}
