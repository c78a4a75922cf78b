package catalog

import (
	"slices"
	"strings"
)

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
// warning.
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
	if opts.Home == "" {
		opts.Home = "home" // only to make the user paths; no disk is read
	}
	opts.Projects, opts.Sources = nil, nil
	if content == nil {
		content = []byte{}
	}
	fs := &fileReader{content: content}
	c := &collector{opts: opts, fs: fs}
	read(c)
	relabel := func(file string) string {
		for _, p := range fs.served {
			if rest, ok := strings.CutPrefix(file, p); ok {
				return label + rest
			}
		}
		return file
	}
	var entries []Entry
	for _, e := range c.entries {
		e.File = relabel(e.File)
		if !slices.ContainsFunc(entries, func(o Entry) bool { return o.File == e.File && o.Name == e.Name }) {
			entries = append(entries, e)
		}
	}
	var warnings []SourceWarning
	for _, w := range c.warnings {
		w.File = relabel(w.File)
		if !slices.Contains(warnings, w) {
			warnings = append(warnings, w)
		}
	}
	slices.SortFunc(entries, compareEntries)
	return entries, warnings
}
