package catalog

import (
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
