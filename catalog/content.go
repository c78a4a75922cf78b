package catalog

import (
	"fmt"
	"slices"
	"strings"
)

// A candidate is handed in whole (an upload, a file named on the command
// line), so what it yields is bounded: the servers of one candidate, and
// its warnings; past these one warning says how many more there were.
const (
	MaxContentEntries  = 1000
	MaxContentWarnings = 100
)

// ContentLimit is the largest content of src's format that [ReadContent]
// reads, the bound src's reader applies to the host's own files:
// [MaxFileBytes] for Claude Desktop's and Claude Code's JSON, which is
// walked as a stream, [MaxSettingsBytes] for the formats parsed whole
// (JSON with comments, YAML, TOML); 0 for a src that is not a host. A
// caller reads no more than this of a file it hands in.
func ContentLimit(src Source) int64 {
	for _, r := range allReaders() {
		if r.source == src {
			return r.limit
		}
	}
	return 0
}

// ReadContent maps the servers of content, one file of src's format given
// whole (a candidate a user hands in rather than a file on this machine),
// as [List] maps that host's user files. Each path the host's reader
// would open reads content, so a host with two user files of different
// shapes (VS Code's mcp.json and settings.json) reads either shape; an
// entry found twice that way is kept once. label stands for the file in
// the entries and warnings (with the part after '#' of a Claude Code
// project entry kept). Nothing is read from disk. opts.Home gives
// ${userHome} and the host's user paths; opts.Projects and opts.Sources
// are not used. A src that is not a host (builtin, or unknown) gives one
// warning. At most MaxContentEntries entries (the first in sort order)
// and MaxContentWarnings warnings are kept, plus one warning for the rest.
func ReadContent(opts Options, src Source, label string, content []byte) ([]Entry, []SourceWarning) {
	var read func(*collector)
	for _, r := range allReaders() {
		if r.source == src && src != SourceBuiltin {
			read = r.read
		}
	}
	if read == nil {
		return nil, []SourceWarning{{Source: src, File: label, Message: "not a host format: want one of the catalog's host sources"}}
	}
	opts.Projects, opts.Sources = nil, nil
	opts = opts.absolute() // a relative home would make ${userHome} relative
	if opts.Home == "" {
		opts.Home = "home" // only to make the user paths; no disk is read
	}
	if content == nil {
		content = []byte{}
	}
	fs := &fileReader{content: content}
	c := &collector{opts: opts, fs: fs}
	read(c)
	relabel := func(file string) string {
		for _, p := range fs.served {
			// The path itself, or a part of it (Claude Code's
			// "#projects/..."); not a longer name (opencode.jsonc).
			if rest, ok := strings.CutPrefix(file, p); ok && (rest == "" || rest[0] == '#') {
				return label + rest
			}
		}
		return file
	}
	type key struct{ file, name string }
	seen := make(map[key]bool, len(c.entries))
	var entries []Entry
	for _, e := range c.entries {
		e.File = relabel(e.File)
		if k := (key{e.File, e.Name}); !seen[k] {
			seen[k] = true
			entries = append(entries, e)
		}
	}
	seenWarning := make(map[SourceWarning]bool, len(c.warnings))
	var warnings []SourceWarning
	for _, w := range c.warnings {
		w.File = relabel(w.File)
		if !seenWarning[w] {
			seenWarning[w] = true
			warnings = append(warnings, w)
		}
	}
	slices.SortFunc(entries, compareEntries)
	if n := len(entries) - MaxContentEntries; n > 0 {
		entries = entries[:MaxContentEntries]
		warnings = append(warnings, SourceWarning{Source: src, File: label, Message: fmt.Sprintf("%d more servers not read: at most %d in one candidate", n, MaxContentEntries)})
	}
	if n := len(warnings) - MaxContentWarnings; n > 0 {
		warnings = append(warnings[:MaxContentWarnings], SourceWarning{Source: src, File: label, Message: fmt.Sprintf("and %d more warnings", n)})
	}
	return entries, warnings
}
