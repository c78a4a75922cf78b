package runtime

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/openprogram/mcpvisor/catalog"
)

// The catalog routes (DESIGN K2–K4). Every config in their answers is in
// response form.

func (r *Runtime) handleCatalog(w http.ResponseWriter, req *http.Request) error {
	list, err := r.Catalog(req.Context())
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, list)
}

func (r *Runtime) handleCatalogSourceDiff(w http.ResponseWriter, req *http.Request) error {
	q := req.URL.Query()
	for k := range q {
		if k != "source" {
			return &apiError{Status: http.StatusBadRequest, Field: k, Message: "unknown query parameter " + quoteShort(k) + " (known: source)"}
		}
	}
	if q.Get("source") == "" {
		return &apiError{Status: http.StatusBadRequest, Field: "source", Message: `"source" is missing: one catalog source, such as claude-code`}
	}
	diff, err := r.CatalogSourceDiff(req.Context(), catalog.Source(q.Get("source")))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, diff)
}

func (r *Runtime) handleCatalogDiff(w http.ResponseWriter, req *http.Request) error {
	body, err := readBody(w, req)
	if err != nil {
		return err
	}
	c, err := decodeCandidate(body)
	if err != nil {
		return err
	}
	diff, err := r.DiffCandidate(req.Context(), c)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, diff)
}

// decodeCandidate decodes the body of POST /api/mcp/catalog/diff.
func decodeCandidate(body []byte) (Candidate, error) {
	var c Candidate
	var entries []json.RawMessage
	if err := decodeFields(body, map[string]any{"entries": &entries, "format": &c.Format, "content": &c.Content}); err != nil {
		return Candidate{}, err
	}
	if entries != nil {
		c.Entries = make([]CandidateEntry, 0, len(entries))
	}
	for i, raw := range entries {
		var e CandidateEntry
		if err := decodeFields(raw, map[string]any{"name": &e.Name, "config": &e.Config}); err != nil {
			return Candidate{}, inEntry(err, i)
		}
		if e.Name == "" || e.Config == nil {
			return Candidate{}, &apiError{Status: http.StatusBadRequest, Field: fmt.Sprintf("entries[%d]", i), Message: `an entry needs "name" and "config"`}
		}
		c.Entries = append(c.Entries, e)
	}
	return c, nil
}

// inEntry puts a field error of entries[i] at its path.
func inEntry(err error, i int) error {
	var ae *apiError
	if errors.As(err, &ae) {
		field := fmt.Sprintf("entries[%d]", i)
		if ae.Field != "" {
			field += "." + ae.Field
		}
		return &apiError{Status: ae.Status, Field: field, Message: field + ": " + ae.Message}
	}
	return err
}

func (r *Runtime) handleCatalogApply(w http.ResponseWriter, req *http.Request) error {
	body, err := readBody(w, req)
	if err != nil {
		return err
	}
	var raws []json.RawMessage
	if err := decodeFields(body, map[string]any{"entries": &raws}); err != nil {
		return err
	}
	if len(raws) == 0 {
		return &apiError{Status: http.StatusBadRequest, Field: "entries", Message: `"entries" is missing or empty: the catalog entries to add`}
	}
	entries := make([]ApplyEntry, len(raws))
	for i, raw := range raws {
		e := &entries[i]
		if err := decodeFields(raw, map[string]any{"source": &e.Source, "file": &e.File, "name": &e.Name, "as": &e.As, "config": &e.Config}); err != nil {
			return inEntry(err, i)
		}
	}
	res, err := r.ApplyCatalog(req.Context(), entries)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, res)
}
