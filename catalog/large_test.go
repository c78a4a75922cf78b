package catalog

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// writeLargeClaudeJSON writes a valid ~/.claude.json of about size bytes
// whose bulk is history, with the user's servers after it, at the end.
func writeLargeClaudeJSON(t testing.TB, home string, size int) string {
	t.Helper()
	path := filepath.Join(home, ".claude.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	line := strings.Repeat("refactor the \\\"parser\\\" and keep the tests green; ", 40)
	fmt.Fprint(f, `{"numStartups": 1234, "projects": {`)
	written := 0
	for p := 0; written < size; p++ {
		if p > 0 {
			fmt.Fprint(f, ",")
		}
		n, _ := fmt.Fprintf(f, `"/work/project-%d": {"allowedTools": [], "history": [`, p)
		written += n
		for i := range 50 {
			if i > 0 {
				fmt.Fprint(f, ",")
			}
			n, _ := fmt.Fprintf(f, `{"display": "%s", "pastedContents": {"%d": {"id": %d, "type": "text", "content": "%s"}}}`, line, i, i, line)
			written += n
		}
		fmt.Fprint(f, "]")
		if p == 7 {
			fmt.Fprint(f, `, "mcpServers": {"project-local": {"command": "node", "args": ["srv.js"]}}`)
		}
		fmt.Fprint(f, "}")
	}
	fmt.Fprint(f, `}, "tipsHistory": {"a": 1}, "mcpServers": {"after-history": {"type": "http", "url": "https://example.com/mcp"}}}`)
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

const largeSize = 11 << 20

// A valid 11 MiB ~/.claude.json whose bulk is history still lists its
// servers, and reading it allocates a small fraction of its size: the
// history is stepped over, never built.
func TestLargeClaudeJSONListsItsServers(t *testing.T) {
	home := t.TempDir()
	path := writeLargeClaudeJSON(t, home, largeSize)
	st, err := os.Stat(path)
	if err != nil || st.Size() < largeSize {
		t.Fatalf("file of %d bytes, want at least %d (%v)", st.Size(), largeSize, err)
	}
	got, allocated := listClaudeCode(t, home)
	if got["after-history"] != path || got["project-local"] != path+"#projects//work/project-7" || len(got) != 2 {
		t.Errorf("entries %v", got)
	}
	// A bound well under the file: had the history been held, or every
	// string of it allocated, this would be over 11 MiB.
	if limit := uint64(1 << 20); allocated > limit {
		t.Errorf("listing an %d-byte file allocated %d bytes, want under %d", st.Size(), allocated, limit)
	}
	t.Logf("%d bytes file, %d bytes allocated", st.Size(), allocated)
}

// listClaudeCode lists the Claude Code servers under home, with no
// warning, as name to file, and the bytes the listing allocated.
func listClaudeCode(t *testing.T, home string) (map[string]string, uint64) {
	t.Helper()
	opts := Options{Home: home, Sources: []Source{SourceClaudeCode}}
	var entries []Entry
	var warnings []SourceWarning
	allocated := bytesAllocated(func() { entries, warnings = List(opts) })
	if len(warnings) != 0 {
		t.Fatal(warnings)
	}
	got := map[string]string{}
	for _, e := range entries {
		got[e.Name] = e.File
	}
	if len(got) != len(entries) {
		t.Errorf("%d entries, %d names", len(entries), len(got))
	}
	return got, allocated
}

// bytesAllocated is the heap allocated while f runs (this goroutine's and
// any other's: the test runs alone).
func bytesAllocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func BenchmarkLargeClaudeJSON(b *testing.B) {
	home := b.TempDir()
	path := writeLargeClaudeJSON(b, home, largeSize)
	st, _ := os.Stat(path)
	opts := Options{Home: home, Sources: []Source{SourceClaudeCode}}
	b.SetBytes(st.Size())
	b.ReportAllocs()
	for b.Loop() {
		if entries, _ := List(opts); len(entries) != 2 {
			b.Fatal(len(entries))
		}
	}
}
