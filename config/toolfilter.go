package config

import (
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"
)

// MaxToolPatterns is the most globs [Server.Validate] accepts in each of
// tools.allow and tools.deny, and MaxToolPatternBytes the longest glob.
const (
	MaxToolPatterns     = 256
	MaxToolPatternBytes = 256
)

// MaxFilteredNameBytes is the longest tool name a filter can let through:
// the MCP specification's bound on tool names (1 to 128 characters, all
// ASCII, so bytes). A filter matches names the server chose, so without
// it the server would set what each match costs.
const MaxFilteredNameBytes = 128

// slash stands for "/" in both a glob and a name before they meet
// path.Match, whose "*" and "?" never match "/". Validate rejects it in
// a glob, so it can only come from a "/".
const slash = "\x00"

// ToolFilter decides which of a server's tools are registered, by the
// tool names the server itself uses (before the "{server}__" prefix). The
// resource and prompt tools the runtime adds for a server count as its
// tools, by their names: list_resources, read_resource, list_prompts,
// get_prompt. A tool left out is not registered, cannot be called (not
// even through a tool value a host kept from before the filter changed:
// the call fails with tools.ErrUnknownTool), and is counted in the
// server's status as tools_filtered: each tool the server listed and
// each resource or prompt tool the runtime would have added, once (the
// runtime adds none under a name a tool of the server has, filtered or
// not, so a clash counts as the server's one tool).
//
// Patterns are [path.Match] globs, except that "/" is a character like
// any other (servers do send names such as "fs/delete_file"): "*" matches
// any run of characters, "/" included, "?" one character, "[a-z]" a
// class, and "\" quotes the next character; "fs/*" matches "fs/x".
//
// A tool is registered when Allow is empty or one of its globs matches,
// and none of Deny matches: deny wins. An empty Allow means "every tool",
// not "no tool" (so PATCH {"tools": {"allow": []}} lifts the allow list);
// deny ["*"] registers none. While either list is set, a tool whose name
// is longer than MaxFilteredNameBytes (the specification's bound) or
// holds a NUL is left out whatever the globs say.
type ToolFilter struct {
	Allow []string
	Deny  []string

	unknown []member // fields this version does not know
}

// IsZero reports whether f lets every tool through and has nothing to
// write back.
func (f ToolFilter) IsZero() bool {
	return len(f.Allow) == 0 && len(f.Deny) == 0 && len(f.unknown) == 0
}

// Allows reports whether the tool the server calls name is registered. A
// malformed glob (which Validate rejects) matches nothing.
func (f ToolFilter) Allows(name string) bool {
	if len(f.Allow) == 0 && len(f.Deny) == 0 {
		return true
	}
	if len(name) > MaxFilteredNameBytes || strings.Contains(name, slash) {
		return false
	}
	name = strings.ReplaceAll(name, "/", slash)
	if len(f.Allow) > 0 && !matchesAny(f.Allow, name) {
		return false
	}
	return !matchesAny(f.Deny, name)
}

// matchesAny reports whether one of patterns matches name, in which "/"
// is already slash.
func matchesAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if ok, err := path.Match(strings.ReplaceAll(p, "/", slash), name); err == nil && ok {
			return true
		}
	}
	return false
}

// Equal reports whether f and o register the same tools: the same lists
// (an empty and a nil list are equal; unknown fields do not count).
func (f ToolFilter) Equal(o ToolFilter) bool { return f.equal(o) }

func (f ToolFilter) clone() ToolFilter {
	return ToolFilter{Allow: slices.Clone(f.Allow), Deny: slices.Clone(f.Deny), unknown: cloneMembers(f.unknown)}
}

// equal compares what decides registration; an empty and a nil list are
// equal, and unknown fields do not count.
func (f ToolFilter) equal(o ToolFilter) bool {
	return slices.Equal(f.Allow, o.Allow) && slices.Equal(f.Deny, o.Deny)
}

// validate checks every glob, allow first.
func (f ToolFilter) validate() *FieldError {
	for _, list := range []struct {
		field    string
		patterns []string
	}{{"tools.allow", f.Allow}, {"tools.deny", f.Deny}} {
		if len(list.patterns) > MaxToolPatterns {
			return fieldErr(list.field, fmt.Sprintf("at most %d patterns", MaxToolPatterns))
		}
		for i, p := range list.patterns {
			field := fmt.Sprintf("%s[%d]", list.field, i)
			switch {
			case p == "":
				return fieldErr(field, "must not be empty")
			case len(p) > MaxToolPatternBytes:
				return fieldErr(field, fmt.Sprintf("longer than %d bytes", MaxToolPatternBytes))
			case strings.Contains(p, slash):
				return fieldErr(field, "must not contain a NUL character")
			}
			if _, err := path.Match(p, ""); err != nil {
				return fieldErr(field, fmt.Sprintf(`bad glob %s: use "*", "?", "[...]" and "\" for a literal`, quote(p)))
			}
		}
	}
	return nil
}

// decodeToolFilter decodes the "tools" object of an entry. With strict (a
// request body) an unknown member is an error; otherwise it is kept.
func decodeToolFilter(raw json.RawMessage, strict bool) (ToolFilter, *FieldError) {
	fields, err := readObject(raw)
	if err != nil {
		return ToolFilter{}, objectError("tools", err)
	}
	var f ToolFilter
	for _, m := range fields {
		if isNull(m.value) {
			continue
		}
		var ferr *FieldError
		switch m.key {
		case "allow":
			f.Allow, ferr = decodeStrings("tools.allow", m.value)
		case "deny":
			f.Deny, ferr = decodeStrings("tools.deny", m.value)
		default:
			if strict {
				return ToolFilter{}, fieldErr(keyPath("tools", m.key), "unknown field")
			}
			f.unknown = append(f.unknown, m)
		}
		if ferr != nil {
			return ToolFilter{}, ferr
		}
	}
	return f, nil
}

// patchToolFilter applies a PATCH's "tools" object to cur: "allow" and
// "deny" each replace when present ([] clears) and are kept when absent.
func patchToolFilter(cur ToolFilter, raw json.RawMessage) (ToolFilter, *FieldError) {
	fields, err := readObject(raw)
	if err != nil {
		return ToolFilter{}, objectError("tools", err)
	}
	f := cur.clone()
	for _, m := range fields {
		if isNull(m.value) {
			return ToolFilter{}, nullErr(keyPath("tools", m.key))
		}
		var ferr *FieldError
		switch m.key {
		case "allow":
			f.Allow, ferr = decodeStrings("tools.allow", m.value)
		case "deny":
			f.Deny, ferr = decodeStrings("tools.deny", m.value)
		default:
			ferr = fieldErr(keyPath("tools", m.key), "unknown field")
		}
		if ferr != nil {
			return ToolFilter{}, ferr
		}
	}
	return f, nil
}

// marshalToolFilter writes the storage form: the lists that are set, then
// the unknown members.
func marshalToolFilter(f ToolFilter) (json.RawMessage, error) {
	var ms []member
	for _, l := range []struct {
		key  string
		list []string
	}{{"allow", f.Allow}, {"deny", f.Deny}} {
		if len(l.list) == 0 {
			continue
		}
		raw, err := encodeJSON(l.list)
		if err != nil {
			return nil, err
		}
		ms = append(ms, member{key: l.key, value: raw})
	}
	return encodeObject(append(ms, f.unknown...))
}

// ToolFilterView is the response form of [ToolFilter] (no field of it is
// a secret); both lists are never nil.
type ToolFilterView struct {
	Allow []string `json:"allow"`
	Deny  []string `json:"deny"`
}

// View returns the response form of f.
func (f ToolFilter) View() ToolFilterView {
	v := ToolFilterView{Allow: slices.Clone(f.Allow), Deny: slices.Clone(f.Deny)}
	if v.Allow == nil {
		v.Allow = []string{}
	}
	if v.Deny == nil {
		v.Deny = []string{}
	}
	return v
}

// WithLive returns s with the fields a running session takes on without a
// restart taken from o: the tool filter (tools) and the output caps
// (max_output_bytes, max_media_bytes). next.Equal(cur.WithLive(next))
// says that next differs from cur in those fields at most, so the
// manager can apply it to the session that runs instead of restarting it.
func (s Server) WithLive(o Server) Server {
	s.Tools = o.Tools.clone()
	s.MaxOutputBytes, s.MaxMediaBytes = o.MaxOutputBytes, o.MaxMediaBytes
	const live = zeroMaxOutput | zeroMaxMedia
	s.zeros = s.zeros&^live | o.zeros&live
	return s
}
