package mcpconn

import (
	"strings"

	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/redact"
)

// Bounds on what a server says about itself in initialize. The runtime
// keeps these per server (status, events, the history of events), so a
// server's megabyte answer must not become a megabyte of ours.
const (
	// MaxInstructionsBytes bounds a server's instructions (16 KiB, more
	// than any system prompt should take from one server).
	MaxInstructionsBytes = 16 << 10
	// MaxInfoTextBytes bounds each short text of the server info (name,
	// title, version).
	MaxInfoTextBytes = 256
	// MaxInfoLongBytes bounds the server info's description and website
	// URL.
	MaxInfoLongBytes = 4 << 10
)

// InstructionsTruncated ends instructions that were cut to
// MaxInstructionsBytes.
const InstructionsTruncated = "\n…[instructions truncated]"

// Identity is what a server said about itself in initialize, as it may
// leave the connection: scrubbed of every secret the connection knows and
// bounded.
type Identity struct {
	// ServerInfo is nil when the server sent no serverInfo.
	ServerInfo      *events.ServerInfo
	ProtocolVersion string
	Instructions    string
}

// Identity returns who the server says it is. It reads the initialize
// answer anew on each call; the server actor calls it once per session.
func (c *Conn) Identity() Identity {
	res := c.cs.InitializeResult()
	if res == nil {
		return Identity{}
	}
	id := Identity{
		ProtocolVersion: bounded(c.scrub, res.ProtocolVersion, maxIconField, redact.Truncated),
		Instructions:    bounded(c.scrub, res.Instructions, MaxInstructionsBytes, InstructionsTruncated),
	}
	if i := res.ServerInfo; i != nil {
		id.ServerInfo = &events.ServerInfo{
			Name:        bounded(c.scrub, i.Name, MaxInfoTextBytes, redact.Truncated),
			Title:       bounded(c.scrub, i.Title, MaxInfoTextBytes, redact.Truncated),
			Version:     bounded(c.scrub, i.Version, MaxInfoTextBytes, redact.Truncated),
			Description: bounded(c.scrub, i.Description, MaxInfoLongBytes, redact.Truncated),
			WebsiteURL:  whole(c.scrub, i.WebsiteURL, MaxInfoLongBytes),
			Icons:       c.Icons(i.Icons),
		}
	}
	return id
}

// bounded is text scrubbed and cut to max bytes on a rune boundary, with
// marker appended when it was cut. The result is a copy whenever it was
// cut, so that it does not keep the server's whole answer alive.
func bounded(scrub *redact.Scrubber, text string, max int, marker string) string {
	text = scrub.String(text)
	if len(text) <= max {
		return text
	}
	return strings.Clone(scrub.Cut(text, max)) + marker
}

// whole is text scrubbed, or "" when it is longer than max: for a value
// (a URL) that a cut would make wrong rather than short.
func whole(scrub *redact.Scrubber, text string, max int) string {
	if text = scrub.String(text); len(text) > max {
		return ""
	}
	return text
}
