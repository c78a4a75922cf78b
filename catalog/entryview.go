package catalog

import (
	"encoding/json"
	"log/slog"

	"github.com/openprogram/mcpvisor/config"
)

// Entry.Config holds the host's secrets: formatting an Entry with fmt,
// encoding/json or log/slog yields its masked form instead, so that a
// debug dump or a log attribute never carries them. Config itself is the
// storage form, for the code that applies or diffs an entry.

// entryView is the masked form of an Entry: Config is the masked view of
// the mapped server, or null when it does not parse as one.
type entryView struct {
	Source      Source             `json:"source"`
	File        string             `json:"file"`
	Name        string             `json:"name"`
	Config      *config.ServerView `json:"config"`
	Requires    []string           `json:"requires,omitempty"`
	Description string             `json:"description,omitempty"`
	Warnings    []string           `json:"warnings,omitempty"`
}

// view returns the masked form of e.
func (e Entry) view() entryView {
	return entryView{Source: e.Source, File: e.File, Name: e.Name, Config: MaskedConfig(e.Config),
		Requires: e.Requires, Description: e.Description, Warnings: e.Warnings}
}

// MaskedConfig returns the masked view of raw, an entry's storage form
// (Entry.Config), or nil if it is not a valid entry: nothing of it is then
// shown, since only a parsed entry can be masked.
func MaskedConfig(raw json.RawMessage) *config.ServerView {
	if len(raw) == 0 {
		return nil
	}
	// The entry's own name may not be a valid one: the view is of the
	// fields only.
	doc := append(append([]byte(`{"servers":{"entry":`), raw...), "}}"...)
	f, err := config.Parse(doc)
	if err != nil || len(f.Servers) != 1 {
		return nil
	}
	v := f.Servers[0].View()
	v.Name = ""
	return &v
}

// MarshalJSON encodes the masked form: Config as the masked server view.
func (e Entry) MarshalJSON() ([]byte, error) { return json.Marshal(e.view()) }

// String returns the masked form as JSON, for %v and %s.
func (e Entry) String() string {
	b, err := json.Marshal(e.view())
	if err != nil {
		return "<unprintable catalog entry>"
	}
	return string(b)
}

// GoString is like String; it keeps %#v from printing Config raw.
func (e Entry) GoString() string { return "catalog.Entry" + e.String() }

// LogValue logs the masked form.
func (e Entry) LogValue() slog.Value { return slog.AnyValue(e.view()) }
