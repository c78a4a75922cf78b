package catalog

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeProjects writes a ~/.claude.json of n projects, each with the
// servers project(p) gives, and returns its size.
func writeProjects(t *testing.T, home string, n int, project func(p int) string) int64 {
	t.Helper()
	f, err := os.Create(filepath.Join(home, ".claude.json"))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(f, `{"projects":{`)
	for p := range n {
		if p > 0 {
			fmt.Fprint(f, ",")
		}
		fmt.Fprintf(f, `"/p/%d":{"mcpServers":{%s}}`, p, project(p))
	}
	fmt.Fprint(f, `}}`)
	st, err := f.Stat()
	if err != nil || f.Close() != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// Kept values under MaxKeptBytes each but over MaxFileKeptBytes together
// (40 projects of 300 KiB of servers) stop the walk: the servers kept
// before are listed, with one warning naming the bound, and memory stays
// bounded by it, not by the file.
func TestFileKeptBytesBounded(t *testing.T) {
	home := t.TempDir()
	arg := strings.Repeat("a", 300<<10)
	size := writeProjects(t, home, 40, func(int) string { return `"s":{"command":"x","args":["` + arg + `"]}` })
	var entries []Entry
	var warnings []SourceWarning
	allocated := bytesAllocated(func() {
		entries, warnings = List(Options{Home: home, Sources: []Source{SourceClaudeCode}})
	})
	t.Logf("a %d-byte file: %d entries, allocated %d bytes", size, len(entries), allocated)
	if want := MaxFileKeptBytes / (300 << 10); len(entries) < want-2 || len(entries) > want {
		t.Errorf("%d entries, want about %d", len(entries), want)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0].Message, fmt.Sprint(MaxFileKeptBytes)) || warnings[0].File != filepath.Join(home, ".claude.json") {
		t.Errorf("warnings %v", warnings)
	}
	// Each kept byte is copied some ten times on its way to an entry (the
	// kept value, its fields, the mapped config and its encoding).
	if limit := uint64(16 * MaxFileKeptBytes); allocated > limit {
		t.Errorf("allocated %d bytes, want at most %d", allocated, limit)
	}
}

// A file of more than MaxFileEntries servers (30 projects of 100 small
// ones) gives MaxFileEntries, the first in file order and name order, and
// one warning naming the bound; ReadContent of it too.
func TestFileEntriesBounded(t *testing.T) {
	home := t.TempDir()
	writeProjects(t, home, 30, func(int) string {
		var b strings.Builder
		for s := range 100 {
			if s > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `"s%02d":{"command":"npx","args":["-y","x"]}`, s)
		}
		return b.String()
	})
	check := func(what string, entries []Entry, warnings []SourceWarning) {
		t.Helper()
		n := 0
		for _, w := range warnings {
			if strings.Contains(w.Message, fmt.Sprintf("more than %d servers", MaxFileEntries)) {
				n++
			}
		}
		if len(entries) != MaxFileEntries || n != 1 || len(warnings) != 1 {
			t.Errorf("%s: %d entries, warnings %v", what, len(entries), warnings)
		}
		for _, e := range entries {
			if strings.HasSuffix(e.File, "#projects//p/10") {
				t.Errorf("%s: %s %s listed past the first %d", what, e.File, e.Name, MaxFileEntries)
				break
			}
		}
	}
	entries, warnings := List(Options{Home: home, Sources: []Source{SourceClaudeCode}})
	check("List", entries, warnings)
	data, err := os.ReadFile(filepath.Join(home, ".claude.json"))
	if err != nil {
		t.Fatal(err)
	}
	entries, warnings = ReadContent(Options{}, SourceClaudeCode, "upload", data)
	check("ReadContent", entries, warnings)
}
