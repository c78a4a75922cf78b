package runtime

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/openprogram/mcpvisor/catalog"
	"github.com/openprogram/mcpvisor/config"
)

// The catalog (DESIGN K2): the built-in templates and the servers other
// hosts on this machine configure, read under Options.Home and
// Options.Projects at each call (a host's file may change at any time),
// and shown masked like every server of the management API.

// CatalogEntry is one server of the catalog as the API shows it. Source,
// File and Name identify it. Config is the mapped server in response form
// (every secret masked; a value made only of references, such as
// "Bearer ${GITHUB_TOKEN}", shown as its reference), or nil when the
// mapped entry does not even parse, which a warning then says.
type CatalogEntry struct {
	Source      catalog.Source     `json:"source"`
	File        string             `json:"file"`
	Name        string             `json:"name"`
	Config      *config.ServerView `json:"config"`
	Requires    []string           `json:"requires,omitempty"`
	Description string             `json:"description,omitempty"`
	Warnings    []string           `json:"warnings"`
}

// CatalogList is the answer of Catalog: the entries, sorted by source,
// file and name, and a warning for each host file that could not be read
// (corrupt, unreadable, too large, outside the allowed folders).
type CatalogList struct {
	Entries  []CatalogEntry          `json:"entries"`
	Warnings []catalog.SourceWarning `json:"warnings"`
}

// Catalog lists the catalog. It reads the host files now, without the
// manager: it changes nothing. ctx is checked before and after the read,
// which is bounded by the catalog's file limits.
func (r *Runtime) Catalog(ctx context.Context) (CatalogList, error) {
	entries, warnings, err := r.readCatalog(ctx)
	if err != nil {
		return CatalogList{}, err
	}
	out := CatalogList{Entries: make([]CatalogEntry, 0, len(entries)), Warnings: nonNil(warnings)}
	for _, e := range entries {
		out.Entries = append(out.Entries, catalogEntryOf(e))
	}
	return out, nil
}

// readCatalog lists the catalog's entries of the given sources (all when
// none) under the runtime's home and projects.
func (r *Runtime) readCatalog(ctx context.Context, sources ...catalog.Source) ([]catalog.Entry, []catalog.SourceWarning, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	entries, warnings := catalog.List(r.catalogOptions(sources...))
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	return entries, warnings, nil
}

func (r *Runtime) catalogOptions(sources ...catalog.Source) catalog.Options {
	return catalog.Options{Home: r.opts.Home, Projects: r.opts.Projects, Sources: sources}
}

func catalogEntryOf(e catalog.Entry) CatalogEntry {
	out := CatalogEntry{Source: e.Source, File: e.File, Name: e.Name, Requires: e.Requires,
		Description: e.Description, Warnings: nonNil(e.Warnings)}
	s, err := entryServer(e.Name, e.Config)
	if err != nil {
		out.Warnings = append(out.Warnings, "the mapped config does not parse: "+err.Error())
		return out
	}
	v := s.View()
	out.Config = &v
	return out
}

// entryServer reads a catalog entry's config, the storage form of one
// server, as the config file would hold it under name. A name that is
// not valid in mcpvisor (a host's own name) is read under a stand-in and
// kept as the Server's Name, so that validation names it.
func entryServer(name string, raw json.RawMessage) (config.Server, error) {
	key := name
	if config.ValidateName(key) != nil {
		key = "entry"
	}
	doc, err := json.Marshal(map[string]map[string]json.RawMessage{"servers": {key: raw}})
	if err != nil {
		return config.Server{}, fmt.Errorf("the entry's config is not JSON")
	}
	f, err := config.Parse(doc)
	if err != nil {
		return config.Server{}, err
	}
	if len(f.Servers) != 1 {
		return config.Server{}, fmt.Errorf("the entry's config is not one server")
	}
	s := f.Servers[0]
	s.Name = name
	return s, nil
}
