package runtime

import (
	"context"
	"encoding/json"
	"errors"
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
//
// One read runs at a time, the others wait for it as long as their ctx
// lets them: a read may hold some tens of MiB at its bounds (a kept
// ~/.claude.json, a JSONC file parsed whole), and the catalog, diff and
// apply routes each read, so concurrent requests would hold that many
// times over; serialised, the runtime's peak is one read's.
func (r *Runtime) readCatalog(ctx context.Context, sources ...catalog.Source) ([]catalog.Entry, []catalog.SourceWarning, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	if err := r.awaitCatalogRead(ctx); err != nil {
		return nil, nil, err
	}
	defer func() { <-r.catalogReads }()
	entries, warnings := catalog.List(r.catalogOptions(sources...))
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	return entries, warnings, nil
}

// awaitCatalogRead takes the catalog's one read slot, waiting while
// another read holds it until ctx ends. A free slot is taken without
// looking at ctx, which was just checked.
func (r *Runtime) awaitCatalogRead(ctx context.Context) error {
	select {
	case r.catalogReads <- struct{}{}:
		return nil
	default:
	}
	r.catalogQueued.Add(1)
	defer r.catalogQueued.Add(-1)
	select {
	case r.catalogReads <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
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
// kept as the Server's Name, so that validation names it; an error of the
// read then names the field alone, not the stand-in.
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
	var fe *config.FieldError
	if errors.As(err, &fe) && key != name {
		// Name the field, not the stand-in: "servers.entry.type" would
		// point at a server that is nowhere.
		return config.Server{}, &config.FieldError{Field: fe.Field, Message: fe.Message}
	}
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
