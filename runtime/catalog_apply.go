package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/openprogram/mcpvisor/catalog"
	"github.com/openprogram/mcpvisor/config"
)

// Applying catalog entries (DESIGN K4): each entry is added as POST
// /api/mcp/servers adds a server, through the manager's one serialiser,
// one after another; an entry that fails changes nothing and stops no
// other.

// ApplyEntry names one catalog entry to add. Source and Name pick it;
// File is needed only where the name is in several files of the source
// (a user and a project entry). As, if set, is the name it is added
// under (a host's name that mcpvisor does not accept, or one already
// taken). Config, if set, is laid over the entry's config as a PATCH
// body (C4: fields replace, env and headers merge by key, "" deletes):
// how a template gets the values the user must supply.
type ApplyEntry struct {
	Source catalog.Source  `json:"source"`
	File   string          `json:"file,omitempty"`
	Name   string          `json:"name"`
	As     string          `json:"as,omitempty"`
	Config json.RawMessage `json:"config,omitempty"`
}

// The statuses of an ApplyResult.
const (
	// ApplyAdded: the server was added and saved, and connects as a
	// POST's would; Entry shows it.
	ApplyAdded = "added"
	// ApplyRefused: the entry is not in the catalog, is ambiguous, or its
	// config (with the overlay) is invalid; Error says why and Field
	// names the field to blame. Nothing was changed.
	ApplyRefused = "refused"
	// ApplyConflict: a server of that name is configured already; nothing
	// was changed (apply it with "as").
	ApplyConflict = "conflict"
)

// ApplyResult says what happened to one ApplyEntry. Server is the name it
// was (or would have been) added under.
type ApplyResult struct {
	Source catalog.Source `json:"source"`
	File   string         `json:"file,omitempty"`
	Name   string         `json:"name"`
	Server string         `json:"server"`
	Status string         `json:"status"`
	Error  string         `json:"error,omitempty"`
	Field  string         `json:"field,omitempty"`
	Entry  *ServerEntry   `json:"entry,omitempty"`
}

// CatalogApply is the answer of ApplyCatalog: one result per entry, in
// the order given.
type CatalogApply struct {
	Results []ApplyResult `json:"results"`
}

// ApplyCatalog adds the entries, in order, each as AddServer would. The
// catalog is read once, for the sources named. It fails as a whole only
// when the catalog cannot be read (ctx); every other problem is the
// result of its own entry.
func (r *Runtime) ApplyCatalog(ctx context.Context, entries []ApplyEntry) (CatalogApply, error) {
	var sources []catalog.Source
	for _, e := range entries {
		if slices.Contains(catalog.Sources(), e.Source) && !slices.Contains(sources, e.Source) {
			sources = append(sources, e.Source)
		}
	}
	var found []catalog.Entry
	if len(sources) > 0 {
		var err error
		if found, _, err = r.readCatalog(ctx, sources...); err != nil {
			return CatalogApply{}, err
		}
	}
	out := CatalogApply{Results: make([]ApplyResult, 0, len(entries))}
	for _, e := range entries {
		out.Results = append(out.Results, r.applyOne(ctx, found, e))
	}
	return out, nil
}

func (r *Runtime) applyOne(ctx context.Context, found []catalog.Entry, e ApplyEntry) ApplyResult {
	res := ApplyResult{Source: e.Source, File: e.File, Name: e.Name, Server: e.Name}
	if e.As != "" {
		res.Server = e.As
	}
	refuse := func(err error) ApplyResult {
		res.Status, res.Error = ApplyRefused, err.Error()
		var fe *config.FieldError
		if errors.As(err, &fe) {
			res.Field = fe.Field
		}
		return res
	}
	entry, err := pickEntry(found, e)
	if err != nil {
		return refuse(err)
	}
	res.File = entry.File
	s, err := CatalogServer(entry, res.Server, e.Config)
	if err != nil {
		return refuse(err)
	}
	added, err := r.AddServer(ctx, s)
	switch {
	case errors.Is(err, ErrServerExists):
		res.Status, res.Error = ApplyConflict, err.Error()
	case err != nil:
		return refuse(err)
	default:
		res.Status, res.Entry = ApplyAdded, &added
	}
	return res
}

// pickEntry finds the catalog entry e names.
func pickEntry(found []catalog.Entry, e ApplyEntry) (catalog.Entry, error) {
	switch {
	case !slices.Contains(catalog.Sources(), e.Source):
		return catalog.Entry{}, &config.FieldError{Field: "source", Message: fmt.Sprintf("unknown catalog source %q (known: %v)", e.Source, catalog.Sources())}
	case e.Name == "":
		return catalog.Entry{}, &config.FieldError{Field: "name", Message: `"name" is missing: the entry's name in its source`}
	}
	var match []catalog.Entry
	for _, c := range found {
		if c.Source == e.Source && c.Name == e.Name && (e.File == "" || c.File == e.File) {
			match = append(match, c)
		}
	}
	switch len(match) {
	case 1:
		return match[0], nil
	case 0:
		field := "name"
		if e.File != "" {
			field = "file"
		}
		return catalog.Entry{}, &config.FieldError{Field: field, Message: fmt.Sprintf("no entry %q in the catalog's %s files", e.Name, e.Source)}
	default:
		files := make([]string, len(match))
		for i, m := range match {
			files[i] = m.File
		}
		return catalog.Entry{}, &config.FieldError{Field: "file", Message: fmt.Sprintf("%q is in several %s files; say which in \"file\": %s", e.Name, e.Source, strings.Join(files, ", "))}
	}
}

// CatalogServer is the server a catalog entry becomes under name, with
// overlay (if any) laid over its config as a PATCH body, validated as
// AddServer validates. The error is a *config.FieldError naming the
// field ("as" for a name mcpvisor does not accept).
func CatalogServer(entry catalog.Entry, name string, overlay json.RawMessage) (config.Server, error) {
	s, err := entryServer(name, entry.Config)
	if err != nil {
		return config.Server{}, err
	}
	if err := config.ValidateName(name); err != nil {
		return config.Server{}, &config.FieldError{Field: "as", Message: err.Error() + `: give another name in "as"`}
	}
	if len(overlay) > 0 {
		return config.ApplyPatch(s, overlay)
	}
	if err := s.Validate(); err != nil {
		return config.Server{}, err
	}
	return s, nil
}
