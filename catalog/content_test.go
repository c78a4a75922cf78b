package catalog

import (
	"fmt"
	"strings"
	"testing"
)

// A candidate file is mapped as the host's own file would be, under its
// label, whichever of the host's user shapes it has, and nothing is read
// from disk.
func TestReadContent(t *testing.T) {
	opts := Options{Home: "/home/u", GOOS: "linux"}
	mcpJSON := `{"servers": {"gh": {"type": "http", "url": "https://api.example/mcp", "headers": {"Authorization": "Bearer ${input:gh-token}"}}}}`
	settings := `{"mcp": {"servers": {"fs": {"command": "npx", "args": ["${userHome}/x"]}}}, // a comment
	}`
	for _, c := range []struct {
		content, name string
	}{{mcpJSON, "gh"}, {settings, "fs"}} {
		entries, warnings := ReadContent(opts, SourceVSCode, "upload", []byte(c.content))
		if len(warnings) != 0 || len(entries) != 1 {
			t.Fatalf("%s: %d entries, warnings %v", c.name, len(entries), warnings)
		}
		e := entries[0]
		if e.Name != c.name || e.File != "upload" || e.Source != SourceVSCode {
			t.Errorf("entry %s %s %s", e.Source, e.File, e.Name)
		}
	}
	entries, _ := ReadContent(opts, SourceVSCode, "upload", []byte(settings))
	if !strings.Contains(string(entries[0].Config), `"/home/u/x"`) {
		t.Errorf("${userHome} not from opts.Home: %s", entries[0].Config)
	}

	code := `{"mcpServers": {"a": {"command": "x"}}, "projects": {"/p": {"mcpServers": {"a": {"command": "y"}}}}}`
	entries, _ = ReadContent(opts, SourceClaudeCode, "f", []byte(code))
	if len(entries) != 2 || entries[0].File != "f" || entries[1].File != "f#projects//p" {
		t.Errorf("claude code entries: %+v", entries)
	}

	_, warnings := ReadContent(opts, SourceCodex, "bad.toml", []byte("[[[ not toml"))
	if len(warnings) != 1 || warnings[0].File != "bad.toml" || strings.Contains(warnings[0].Message, "not toml") {
		t.Errorf("corrupt candidate: %v", warnings)
	}
	if _, warnings := ReadContent(opts, SourceBuiltin, "x", nil); len(warnings) != 1 {
		t.Errorf("builtin as a format: %v", warnings)
	}
}

// A candidate of many servers, or of many broken ones, yields at most
// MaxContentEntries entries and MaxContentWarnings warnings, and one
// warning more that says how many were left out.
func TestReadContentBounded(t *testing.T) {
	opts := Options{Home: "/h", GOOS: "linux"}
	build := func(n int, entry string) []byte {
		var b strings.Builder
		b.WriteString(`{"servers": {`)
		for i := range n {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `"a%05d":%s`, i, entry)
		}
		b.WriteString(`}}`)
		return []byte(b.String())
	}
	n := MaxContentEntries + 50
	// One file's bound (MaxFileEntries) comes first; the candidate's bound
	// counts both of VS Code's shapes, each a file of its own.
	entries, warnings := ReadContent(opts, SourceVSCode, "c", build(n, `{"command":"x"}`))
	if len(entries) != MaxContentEntries || len(warnings) != 1 || !strings.Contains(warnings[0].Message, fmt.Sprintf("more than %d servers", MaxFileEntries)) {
		t.Errorf("%d entries, warnings %v", len(entries), warnings)
	}
	both := `{"servers": {"a00000": {"command":"x"}, "a00001": {"command":"x"}}, "mcp": {"servers": {`
	for i := range MaxContentEntries - 1 {
		both += fmt.Sprintf(`"b%05d": {"command":"x"}, `, i)
	}
	both += `"c": {"command":"x"}}}}`
	if entries, warnings := ReadContent(opts, SourceVSCode, "c", []byte(both)); len(entries) != MaxContentEntries || len(warnings) != 1 || !strings.Contains(warnings[0].Message, "2 more servers") {
		t.Errorf("both shapes: %d entries, warnings %v", len(entries), warnings)
	}
	if entries[0].Name != "a00000" || entries[len(entries)-1].Name != fmt.Sprintf("a%05d", MaxContentEntries-1) {
		t.Errorf("kept %s … %s, not the first in order", entries[0].Name, entries[len(entries)-1].Name)
	}
	entries, warnings = ReadContent(opts, SourceVSCode, "c", build(n, `1`))
	if len(entries) != 0 || len(warnings) != MaxContentWarnings+1 || warnings[MaxContentWarnings].Message != fmt.Sprintf("and %d more warnings", MaxFileEntries+1-MaxContentWarnings) {
		t.Errorf("%d entries, %d warnings, last %v", len(entries), len(warnings), warnings[len(warnings)-1])
	}
}

// ReadContent takes a host's content up to the bound of that host's
// format, as its reader takes the host's own file: a format parsed whole
// to MaxSettingsBytes, JSON walked as a stream further (asserted by its
// limit, to keep the test small).
func TestContentLimitIsTheReadersBound(t *testing.T) {
	opts := Options{Home: "/h", GOOS: "linux"}
	bodies := map[Source]string{
		SourceClaudeDesktop: `{"mcpServers": {}}`, SourceClaudeCode: `{"mcpServers": {}}`,
		SourceCursor: `{"mcpServers": {}}`, SourceVSCode: `{"servers": {}}`, SourceWindsurf: `{"mcpServers": {}}`,
		SourceOpencode: `{"mcp": {}}`, SourceGoose: `extensions: {}`, SourceZed: `{"context_servers": {}}`,
		SourceCodex: `[mcp_servers]`, SourceGemini: `{"mcpServers": {}}`,
	}
	if ContentLimit(SourceBuiltin) != 0 || ContentLimit("nope") != 0 {
		t.Errorf("a source that is not a host has a limit")
	}
	for _, src := range Sources()[1:] {
		body, ok := bodies[src]
		if !ok {
			t.Fatalf("%s: no test body", src)
		}
		limit := ContentLimit(src)
		padded := func(n int64) []byte { return []byte(body + strings.Repeat("\n", int(n)-len(body))) }
		switch src {
		case SourceClaudeDesktop, SourceClaudeCode:
			if limit != MaxFileBytes {
				t.Errorf("%s: limit %d, want MaxFileBytes", src, limit)
			}
			limit = MaxSettingsBytes + 1 // read, unlike a settings file
		default:
			if limit != MaxSettingsBytes {
				t.Errorf("%s: limit %d, want MaxSettingsBytes", src, limit)
			}
			_, w := ReadContent(opts, src, "c", padded(limit+1))
			if len(w) != 1 || !strings.Contains(w[0].Message, fmt.Sprintf("over the limit of %d", limit)) {
				t.Errorf("%s: %d bytes: warnings %v", src, limit+1, w)
			}
		}
		if _, w := ReadContent(opts, src, "c", padded(limit)); len(w) != 0 {
			t.Errorf("%s: %d bytes: warnings %v", src, limit, w)
		}
	}
}

// opencode reads opencode.json and opencode.jsonc: content read as both is
// one file, its entries listed once under the label.
func TestReadContentOpencodeOnce(t *testing.T) {
	entries, warnings := ReadContent(Options{Home: "/h", GOOS: "linux"}, SourceOpencode, "up.json",
		[]byte(`{"mcp": {"s": {"type": "local", "command": ["x"]}}}`))
	if len(entries) != 1 || entries[0].File != "up.json" || len(warnings) != 0 {
		t.Errorf("entries %v warnings %v", entries, warnings)
	}
}
