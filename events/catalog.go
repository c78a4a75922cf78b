package events

import (
	"encoding/json"
	"fmt"
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
	// the last listing (all of them, at the first).
	Added, Removed []string
}

// Type implements Event.
func (ToolsChanged) Type() string { return TypeToolsChanged }

func (e ToolsChanged) String() string {
	return e.prefix() + catalogString("tools", e.Count, e.Added, e.Removed)
}

// MarshalJSON implements json.Marshaler.
func (e ToolsChanged) MarshalJSON() ([]byte, error) {
	return marshalCatalog(e.wire(TypeToolsChanged), e.Count, e.Added, e.Removed)
}

func (e ToolsChanged) stamp(seq uint64, t time.Time) Event { e.Seq, e.Time = seq, t; return e }

// PromptsChanged is ToolsChanged for prompts.
type PromptsChanged struct {
	Header
	// Count is the number of prompts the server now offers.
	Count int
	// Added and Removed name the prompts that appeared and went away.
	Added, Removed []string
}

// Type implements Event.
func (PromptsChanged) Type() string { return TypePromptsChanged }

func (e PromptsChanged) String() string {
	return e.prefix() + catalogString("prompts", e.Count, e.Added, e.Removed)
}

// MarshalJSON implements json.Marshaler.
func (e PromptsChanged) MarshalJSON() ([]byte, error) {
	return marshalCatalog(e.wire(TypePromptsChanged), e.Count, e.Added, e.Removed)
}

func (e PromptsChanged) stamp(seq uint64, t time.Time) Event { e.Seq, e.Time = seq, t; return e }

func catalogString(what string, count int, added, removed []string) string {
	s := fmt.Sprintf("%d %s", count, what)
	if len(added) > 0 {
		s += " +" + strings.Join(added, " +")
	}
	if len(removed) > 0 {
		s += " -" + strings.Join(removed, " -")
	}
	return s
}

// marshalCatalog writes empty lists as [] rather than null, so a consumer
// can always range over them.
func marshalCatalog(h wireHeader, count int, added, removed []string) ([]byte, error) {
	if added == nil {
		added = []string{}
	}
	if removed == nil {
		removed = []string{}
	}
	return json.Marshal(struct {
		wireHeader
		Count   int      `json:"count"`
		Added   []string `json:"added"`
		Removed []string `json:"removed"`
	}{h, count, added, removed})
}
