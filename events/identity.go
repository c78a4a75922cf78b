package events

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/openprogram/mcpvisor/tools"
)

// TypeInstructionsChanged is the type name of InstructionsChanged.
const TypeInstructionsChanged = "instructions_changed"

// ServerInfo is who a server says it is (the serverInfo of its
// initialize answer): the server's own words, scrubbed of secrets and
// bounded by the runtime before they reach an event (short texts, a few
// icons, no icon whose src is too long to keep; see the runtime's
// README).
type ServerInfo struct {
	// Name is the implementation's programmatic name.
	Name string `json:"name"`
	// Title is its human-readable name, if sent.
	Title string `json:"title,omitempty"`
	// Version is the implementation's version.
	Version string `json:"version,omitempty"`
	// Description is a human-readable description, if sent.
	Description string `json:"description,omitempty"`
	// WebsiteURL is the server's website, if sent.
	WebsiteURL string `json:"website_url,omitempty"`
	// Icons are the server's icons: untrusted content for a host that
	// renders them (see tools.Icon).
	Icons []tools.Icon `json:"icons,omitempty"`
}

// Clone returns a copy of i that shares no slice with it; nil for nil.
func (i *ServerInfo) Clone() *ServerInfo {
	if i == nil {
		return nil
	}
	c := *i
	if i.Icons != nil {
		c.Icons = make([]tools.Icon, len(i.Icons))
		for k, icon := range i.Icons {
			icon.Sizes = slices.Clone(icon.Sizes)
			c.Icons[k] = icon
		}
	}
	return &c
}

// InstructionsChanged says a server's instructions (the text of its
// initialize answer a host puts into its system prompt) differ from what
// the status showed: its first session that sends some, a new session
// whose text differs from the previous session's, or the text going away
// (a new session without instructions, the server disabled). A reconnect
// that brings the same text emits nothing. It comes before the move to
// ready of the session that brought it, so a server that shows ready
// shows its new text.
type InstructionsChanged struct {
	Header
	// Instructions is the new text, scrubbed of secrets and bounded (cut
	// on a rune boundary and marked when the server sent more); empty
	// when the server now has none.
	Instructions string
}

// Type implements Event.
func (InstructionsChanged) Type() string { return TypeInstructionsChanged }

// String says how long the text is, not what it says: a log line is no
// place for a server's prompt.
func (e InstructionsChanged) String() string {
	if e.Instructions == "" {
		return e.prefix() + "instructions cleared"
	}
	return e.prefix() + fmt.Sprintf("instructions changed (%d bytes)", len(e.Instructions))
}

// MarshalJSON implements json.Marshaler.
func (e InstructionsChanged) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		wireHeader
		Instructions string `json:"instructions"`
	}{e.wire(TypeInstructionsChanged), e.Instructions})
}

func (e InstructionsChanged) stamp(seq uint64, t time.Time) Event { e.Seq, e.Time = seq, t; return e }
