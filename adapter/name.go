package adapter

import "strings"

const (
	// MaxToolNameLen is the longest registry name ToolName returns. 64 is the
	// limit the common model APIs put on function names.
	MaxToolNameLen = 64

	// Separator joins the server and tool parts of a registry name.
	Separator = "__"
)

// maxToolPart is the longest tool part that still leaves room for the
// separator and a one-character server part.
const maxToolPart = MaxToolNameLen - len(Separator) - 1

// ToolName returns the registry name of an MCP tool: "{server}__{tool}" (S4).
//
// Each character (rune) outside [A-Za-z0-9_-] becomes '_', and an empty part
// becomes "_", so neither part is ever empty. The result is at most
// [MaxToolNameLen] characters. When it would be longer, the server part is
// shortened first (to no fewer than one character) because the tool part is
// what tells the model what the tool does; if the tool part alone is longer
// than MaxToolNameLen-3, only its last characters are kept, giving a name of
// exactly MaxToolNameLen characters.
//
// Shortening can make two different tools share a name; the registry resolves
// that (last registered wins). The result depends only on the arguments.
func ToolName(server, tool string) string {
	s, t := sanitize(server), sanitize(tool)
	if len(t) > maxToolPart {
		t = t[len(t)-maxToolPart:]
	}
	if room := MaxToolNameLen - len(Separator) - len(t); len(s) > room {
		s = s[:room]
	}
	return s + Separator + t
}

// sanitize maps every rune outside [A-Za-z0-9_-] to '_'. The result is ASCII,
// so ToolName may cut it at any byte offset.
func sanitize(s string) string {
	if s == "" {
		return "_"
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if isNameRune(r) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

func isNameRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-'
}
