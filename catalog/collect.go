package catalog

import (
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"

	"github.com/openprogram/mcpvisor/config"
)

// collector gathers the entries and warnings of one List call.
type collector struct {
	opts     Options
	fs       *fileReader
	entries  []Entry
	warnings []SourceWarning
	// mapped counts the servers taken from each file read, by its path,
	// up to MaxFileEntries (Claude Code's projects in ~/.claude.json
	// count as that one file).
	mapped map[string]int
}

// MaxFileEntries bounds the servers taken from one file: each is mapped,
// encoded and listed, and ~/.claude.json may hold any number of
// projects' servers. Past it the rest of the file's servers are not
// mapped, and one warning says so. The servers of one object are taken
// in name order.
const MaxFileEntries = 1000

// warn records a problem with a whole file. msg never holds a file value.
func (c *collector) warn(src Source, file, format string, args ...any) {
	c.warnings = append(c.warnings, SourceWarning{Source: src, File: file, Message: fmt.Sprintf(format, args...)})
}

// add records the entry mapped from one host server.
func (c *collector) add(src Source, file, name string, m *mapping) {
	m.dropOffType()
	m.resolveCwd(m.project)
	data, err := json.Marshal(m.cfg)
	if err != nil { // cannot happen: the config holds only strings, ints and bools
		c.warn(src, file, "server %q: cannot encode its mapped config", name)
		return
	}
	warnings := m.warnings
	if config.ValidateName(name) != nil {
		warnings = append(warnings, fmt.Sprintf("the name %q is not a valid mcpvisor server name (letters, digits, '_' or '-', at most %d): apply it under another name", name, config.MaxNameLen))
	}
	c.entries = append(c.entries, Entry{
		Source:   src,
		File:     file,
		Name:     name,
		Config:   data,
		Requires: m.cfg.requires(),
		Warnings: warnings,
	})
}

// mapper maps one host server entry.
type mapper func(name string, f *fields) *mapping

// inProject is mapOne for the entries of a file of project folder dir:
// their relative cwd is resolved against dir.
func inProject(dir string, mapOne mapper) mapper {
	return func(name string, f *fields) *mapping {
		m := mapOne(name, f)
		m.project = dir
		return m
	}
}

// jsonServers reads the servers at want in the JSON file at path (JSON
// with comments when jsonc) and maps each with mapOne.
func (c *collector) jsonServers(src Source, path string, jsonc bool, mapOne mapper, want ...keyPath) {
	read := c.jsonFile
	if jsonc {
		read = c.jsoncFile
	}
	found, ok := read(src, path, want...)
	if !ok {
		return
	}
	for _, v := range found {
		c.servers(src, path, path, v.value, mapOne)
	}
}

// hostFile is one file a reader reads and the project folder it belongs
// to, "" for the user's file.
type hostFile struct {
	path, project string
}

// userAndProjectFiles is the user's file, then the file at rel in each
// project folder. The user's comes first: a file is read once
// (fileReader.open), so one that is both (a project folder that is the
// home directory) keeps its user scope.
func (c *collector) userAndProjectFiles(user string, rel ...string) []hostFile {
	files := []hostFile{{path: user}}
	for _, dir := range c.opts.Projects {
		files = append(files, hostFile{filepath.Join(append([]string{dir}, rel...)...), dir})
	}
	return files
}

// servers decodes an object of server entries and maps each with mapOne,
// in name order, while path, the file read (file names the entries), has
// given fewer than MaxFileEntries. An entry that is not an object is a
// warning for the file.
func (c *collector) servers(src Source, path, file string, raw json.RawMessage, mapOne mapper) {
	var all map[string]json.RawMessage
	if isNullJSON(raw) || c.mapped[path] > MaxFileEntries {
		return
	}
	if json.Unmarshal(raw, &all) != nil {
		c.warn(src, file, "the servers are not a JSON object")
		return
	}
	if c.mapped == nil {
		c.mapped = map[string]int{}
	}
	for _, name := range slices.Sorted(maps.Keys(all)) {
		v := all[name]
		if c.mapped[path] == MaxFileEntries {
			c.mapped[path]++ // warned once
			c.warn(src, path, "it holds more than %d servers: the rest not read", MaxFileEntries)
			return
		}
		c.mapped[path]++
		f, ok := newFields(v)
		if !ok {
			c.warn(src, file, "server %q is not an object: skipped", name)
			continue
		}
		m := mapOne(name, f)
		m.unmapped(f)
		c.add(src, file, name, m)
	}
}

// serverValues maps servers that a YAML or TOML decoder produced, v being
// the value of the key named key: each server goes through JSON so that
// every host is mapped from one shape.
func (c *collector) serverValues(src Source, file, key string, v any, mapOne mapper) {
	if v == nil {
		return
	}
	all, ok := v.(map[string]any)
	if !ok {
		c.warn(src, file, "%s does not map names to servers", key)
		return
	}
	raw := make(map[string]json.RawMessage, len(all))
	for name, v := range all {
		data, err := json.Marshal(v)
		if err != nil {
			c.warn(src, file, "server %q cannot be read (a key that is not a string?): skipped", name)
			continue
		}
		raw[name] = data
	}
	data, _ := json.Marshal(raw) // raw holds only valid JSON
	c.servers(src, file, file, data, mapOne)
}
