package catalog

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeMachine copies testdata/home and testdata/project, files written
// from each host's documentation, into a temporary home and project.
func fakeMachine(t testing.TB) (home, project string) {
	t.Helper()
	root := t.TempDir()
	home, project = filepath.Join(root, "home"), filepath.Join(root, "project")
	for dst, src := range map[string]string{home: "testdata/home", project: "testdata/project"} {
		if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
			t.Fatal(err)
		}
	}
	return home, project
}

// writeFile writes data at rel under dir, making the folders.
func writeFile(t testing.TB, dir, rel, data string) string {
	t.Helper()
	path := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// hostEntries drops the templates.
func hostEntries(entries []Entry) []Entry {
	var out []Entry
	for _, e := range entries {
		if e.Source != SourceBuiltin {
			out = append(out, e)
		}
	}
	return out
}

// normalJSON re-encodes a JSON text so that two equal values compare equal.
func normalJSON(t testing.TB, s string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("not JSON: %v: %s", err, s)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// allText is every string a caller could show of a listing: the entries
// (configs included) and the warnings.
func warningText(entries []Entry, warnings []SourceWarning) string {
	var b strings.Builder
	for _, e := range entries {
		b.WriteString(strings.Join(e.Warnings, "\n"))
		b.WriteString(strings.Join(e.Requires, "\n"))
	}
	for _, w := range warnings {
		b.WriteString(w.String())
		b.WriteString("\n")
	}
	return b.String()
}
