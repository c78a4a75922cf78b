package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/openprogram/mcpvisor/catalog"
	"github.com/openprogram/mcpvisor/config"
)

// The diff of a candidate against the runtime's current config (DESIGN
// K3): what applying each server would do, named by field, never by value.

// The statuses of a DiffServer.
const (
	// DiffAdd: no server of that name is configured.
	DiffAdd = "add"
	// DiffChange: a server of that name is configured with the same type,
	// command and url; Fields names what differs.
	DiffChange = "change"
	// DiffSame: the configured server is the candidate, field for field
	// in meaning (a default written out, ${env:X} for ${X}, is the same).
	DiffSame = "same"
	// DiffConflict: a server of that name is configured with another
	// type, command or url: it is another server, which applying would
	// not replace (apply it under another name).
	DiffConflict = "conflict"
	// DiffInvalid: the candidate cannot be applied as it is (its name is
	// not a valid mcpvisor name, or its config does not parse or is one
	// AddServer refuses); Error says why, naming the field.
	DiffInvalid = "invalid"
)

// DiffServer is one candidate server of a diff. Source and File say where
// it comes from (a host's file, or the candidate's label), so that two
// entries of one name in one source, a user and a project entry, are two
// rows told apart by File. Fields are the names of the storage fields that
// differ ("command", "timeout_seconds"), down to the key for env, headers
// and auth ("env.API_KEY", "headers.Authorization", "auth.token"): a
// secret shows only as changed, never with a value.
type DiffServer struct {
	Source catalog.Source `json:"source,omitempty"`
	File   string         `json:"file,omitempty"`
	Name   string         `json:"name"`
	Status string         `json:"status"`
	Fields []string       `json:"fields"`
	Error  string         `json:"error,omitempty"`
}

// CatalogDiff is the answer of a diff: a row per candidate server in
// catalog order, and the warnings of the files read.
type CatalogDiff struct {
	Servers  []DiffServer            `json:"servers"`
	Warnings []catalog.SourceWarning `json:"warnings"`
}

// CatalogSourceDiff diffs every entry of one catalog source (all its
// files) against the current config.
func (r *Runtime) CatalogSourceDiff(ctx context.Context, source catalog.Source) (CatalogDiff, error) {
	if !slices.Contains(catalog.Sources(), source) {
		return CatalogDiff{}, &config.FieldError{Field: "source", Message: fmt.Sprintf("unknown catalog source %q (known: %v)", source, catalog.Sources())}
	}
	entries, warnings, err := r.readCatalog(ctx, source)
	if err != nil {
		return CatalogDiff{}, err
	}
	return r.diffEntries(entries, warnings), nil
}

// Candidate is what POST /api/mcp/catalog/diff compares: either Entries,
// servers in mcpvisor's storage form, or a whole file as Content in
// Format: "mcpvisor" (an mcp_servers.json) or a catalog host source
// ("claude-desktop", "claude-code", "cursor", "vscode", "windsurf",
// "opencode", "goose", "zed", "codex", "gemini"), read by that host's
// reader as if it were the host's user file.
type Candidate struct {
	Entries []CandidateEntry
	Format  string
	Content string
}

// CandidateEntry is one server of a Candidate: its name and its config in
// storage form (the fields of one entry of mcp_servers.json).
type CandidateEntry struct {
	Name   string          `json:"name"`
	Config json.RawMessage `json:"config"`
}

// candidateLabel is the File of a candidate's rows.
const candidateLabel = "candidate"

// DiffCandidate diffs a candidate against the current config. At most
// MaxApplyEntries entries are taken (a *config.FieldError on "entries").
func (r *Runtime) DiffCandidate(ctx context.Context, c Candidate) (CatalogDiff, error) {
	if err := checkEntryCount(len(c.Entries)); err != nil {
		return CatalogDiff{}, err
	}
	entries, warnings, err := r.candidateEntries(c)
	if err != nil {
		return CatalogDiff{}, err
	}
	if err := ctx.Err(); err != nil {
		return CatalogDiff{}, err
	}
	return r.diffEntries(entries, warnings), nil
}

// candidateEntries turns a candidate into catalog entries.
func (r *Runtime) candidateEntries(c Candidate) ([]catalog.Entry, []catalog.SourceWarning, error) {
	switch {
	case c.Entries != nil && (c.Format != "" || c.Content != ""):
		return nil, nil, &config.FieldError{Field: "format", Message: `send either "entries" or "format" and "content", not both`}
	case c.Entries != nil:
		out := make([]catalog.Entry, 0, len(c.Entries))
		for _, e := range c.Entries {
			out = append(out, catalog.Entry{File: candidateLabel, Name: e.Name, Config: e.Config})
		}
		return out, nil, nil
	case c.Format == "mcpvisor":
		f, err := config.Parse([]byte(c.Content))
		if err == nil {
			var out []catalog.Entry
			if out, err = FileEntries(f, candidateLabel); err == nil {
				return out, nil, nil
			}
		}
		return nil, nil, &config.FieldError{Field: "content", Message: "the mcpvisor file does not parse: " + err.Error()}
	case c.Format == "" || c.Format == string(catalog.SourceBuiltin) || !slices.Contains(catalog.Sources(), catalog.Source(c.Format)):
		return nil, nil, &config.FieldError{Field: "format", Message: fmt.Sprintf(`want "entries", or "format" and "content" with format "mcpvisor" or a host: %v`, catalog.Sources()[1:])}
	default:
		entries, warnings := catalog.ReadContent(r.catalogOptions(), catalog.Source(c.Format), candidateLabel, []byte(c.Content))
		return entries, warnings, nil
	}
}

func (r *Runtime) diffEntries(entries []catalog.Entry, warnings []catalog.SourceWarning) CatalogDiff {
	return DiffCatalog(r.config.Load(), entries, warnings)
}

// DiffCatalog diffs catalog entries against current, a config file, as
// the runtime's diffs do against its own config; warnings are passed
// through. It reads nothing: `demo import` uses it on a file at rest.
func DiffCatalog(current *config.File, entries []catalog.Entry, warnings []catalog.SourceWarning) CatalogDiff {
	out := CatalogDiff{Servers: make([]DiffServer, 0, len(entries)), Warnings: nonNil(warnings)}
	for _, e := range entries {
		row := DiffServer{Source: e.Source, File: e.File, Name: e.Name, Fields: []string{}}
		row.Status, row.Fields, row.Error = diffOne(current, e)
		out.Servers = append(out.Servers, row)
	}
	return out
}

// diffOne is the status of one entry against the current file.
func diffOne(current *config.File, e catalog.Entry) (status string, fields []string, errText string) {
	cand, err := entryServer(e.Name, e.Config)
	if err == nil {
		err = config.ValidateName(e.Name)
	}
	if err == nil {
		// What AddServer would refuse is not an "add".
		err = cand.Validate()
	}
	if err != nil {
		return DiffInvalid, []string{}, err.Error()
	}
	cur, ok := current.Get(e.Name)
	if !ok {
		return DiffAdd, []string{}, ""
	}
	fields, err = changedFields(cur, cand)
	if err != nil {
		return DiffInvalid, []string{}, err.Error()
	}
	switch {
	case len(fields) == 0:
		return DiffSame, fields, ""
	case slices.ContainsFunc(fields, func(f string) bool { return f == "type" || f == "command" || f == "url" }):
		return DiffConflict, fields, ""
	default:
		return DiffChange, fields, ""
	}
}

// changedFields names the storage fields in which a and b differ in
// meaning: the top-level fields, and for env, headers and auth the keys
// within. Both are compared in their canonical form
// ([config.Server.Canonical]): a default written out, an empty auth of
// kind none or ${env:X} for ${X} is no change.
func changedFields(a, b config.Server) ([]string, error) {
	a, b = a.Canonical(), b.Canonical()
	fa, err := storageFields(a)
	if err != nil {
		return nil, err
	}
	fb, err := storageFields(b)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, k := range unionKeys(fa, fb) {
		if sameJSON(fa[k], fb[k]) {
			continue
		}
		if k != "env" && k != "headers" && k != "auth" {
			out = append(out, k)
			continue
		}
		var ma, mb map[string]json.RawMessage
		_ = json.Unmarshal(fa[k], &ma) // absent: nil, every key differs
		_ = json.Unmarshal(fb[k], &mb)
		for _, sub := range unionKeys(ma, mb) {
			if !sameJSON(ma[sub], mb[sub]) {
				out = append(out, k+"."+sub)
			}
		}
	}
	return nonNil(out), nil
}

// FileEntries are the servers of an mcpvisor config file as catalog
// entries of no source, File being label: a candidate to diff or import.
func FileEntries(f *config.File, label string) ([]catalog.Entry, error) {
	out := make([]catalog.Entry, 0, len(f.Servers))
	for _, s := range f.Servers {
		fields, err := storageFields(s)
		if err != nil {
			return nil, err
		}
		raw, err := json.Marshal(fields)
		if err != nil {
			return nil, fmt.Errorf("encoding server %q: %w", s.Name, err)
		}
		out = append(out, catalog.Entry{File: label, Name: s.Name, Config: raw})
	}
	return out, nil
}

// storageFields is the entry of s in the file, field by field.
func storageFields(s config.Server) (map[string]json.RawMessage, error) {
	s.Name = "s" // the name is the key, not a field
	data, err := config.Marshal(&config.File{Servers: []config.Server{s}})
	if err != nil {
		return nil, err
	}
	var doc struct {
		Servers map[string]map[string]json.RawMessage `json:"servers"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("reading back a stored entry: %w", err)
	}
	return doc.Servers["s"], nil
}

func unionKeys(a, b map[string]json.RawMessage) []string {
	keys := slices.Collect(maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

func sameJSON(a, b json.RawMessage) bool {
	var ca, cb bytes.Buffer
	if json.Compact(&ca, a) != nil || json.Compact(&cb, b) != nil {
		return bytes.Equal(a, b)
	}
	return bytes.Equal(ca.Bytes(), cb.Bytes())
}
