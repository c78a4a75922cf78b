package catalog

import (
	"strings"
	"testing"
)

// A goose file of one anchored 200 KiB string and a hundred aliases of it,
// padded with filler nodes so that yaml.v3's excessive-aliasing check lets
// it through, would decode to 20 MiB: the alias is refused, with a
// warning for the file, before anything is expanded.
func TestYAMLAliasRefused(t *testing.T) {
	const n, size = 100, 200 << 10
	var b strings.Builder
	b.WriteString("big: &s \"" + strings.Repeat("x", size) + "\"\nfiller: [")
	b.WriteString(strings.Repeat("1,", n))
	b.WriteString("1]\nextensions:\n  x:\n    type: stdio\n    cmd: npx\n    args: [")
	b.WriteString(strings.Repeat("*s,", n))
	b.WriteString("*s]\n")
	home := t.TempDir()
	writeFile(t, home, ".config/goose/config.yaml", b.String())
	var entries []Entry
	var warnings []SourceWarning
	allocated := bytesAllocated(func() {
		entries, warnings = List(Options{Home: home, GOOS: "linux", Sources: []Source{SourceGoose}})
	})
	if len(entries) != 0 || len(warnings) != 1 || !strings.Contains(warnings[0].Message, "alias") {
		t.Fatalf("entries %d, warnings %v", len(entries), warnings)
	}
	t.Logf("a %d-byte file: allocated %d bytes", b.Len(), allocated)
	if limit := uint64(40 * b.Len()); allocated > limit {
		t.Errorf("allocated %d bytes for a %d-byte file, want at most %d", allocated, b.Len(), limit)
	}
	// A merge key is an alias too.
	writeFile(t, home, ".config/goose/config.yaml", "base: &b {type: stdio, cmd: npx}\nextensions:\n  x:\n    <<: *b\n")
	if entries, warnings = List(Options{Home: home, GOOS: "linux", Sources: []Source{SourceGoose}}); len(entries) != 0 || len(warnings) != 1 {
		t.Fatalf("merge key: entries %d, warnings %v", len(entries), warnings)
	}
}
