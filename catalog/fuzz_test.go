package catalog

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openprogram/mcpvisor/config"
)

// fuzzHost lists a home holding only data as the host's file at rel, and
// checks what every reader must hold for any input: no panic, at most one
// warning for the file, and entries whose config parses as a server.
func fuzzHost(f *testing.F, source Source, rel string) {
	data, err := os.ReadFile(filepath.Join("testdata", "home", rel))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(data))
	for _, h := range hostFiles {
		if h.source == source {
			for _, bad := range h.corrupt {
				if len(bad) < 1<<16 { // the deep ones would slow every mutation
					f.Add(bad)
				}
			}
		}
	}
	home := f.TempDir()
	f.Fuzz(func(t *testing.T, data string) {
		writeFile(t, home, rel, data)
		entries, warnings := List(Options{Home: home, GOOS: "linux", Sources: []Source{source}})
		if len(warnings) > 1 {
			// One per file, except "server X is not an object" ones.
			for _, w := range warnings {
				if w.File != filepath.Join(home, rel) {
					t.Fatalf("a warning for another file: %v", w)
				}
			}
		}
		for _, e := range entries {
			if e.Source != source || e.File == "" {
				t.Fatalf("entry %+v", e)
			}
			doc, _ := json.Marshal(map[string]any{"servers": map[string]json.RawMessage{"x": e.Config}})
			if _, err := config.Parse(doc); err != nil {
				t.Fatalf("%s: config.Parse: %v\n%s", e.Name, err, e.Config)
			}
			var cfg serverConfig
			if err := json.Unmarshal(e.Config, &cfg); err != nil {
				t.Fatal(err)
			}
			for _, v := range mappedStrings(cfg) {
				if _, err := config.ReferencedNames(v); err != nil {
					t.Fatalf("%s: a mapped value mcpvisor cannot read: %v\n%s", e.Name, err, e.Config)
				}
			}
		}
	})
}

func FuzzClaudeDesktop(f *testing.F) {
	fuzzHost(f, SourceClaudeDesktop, ".config/Claude/claude_desktop_config.json")
}
func FuzzClaudeCode(f *testing.F) { fuzzHost(f, SourceClaudeCode, ".claude.json") }
func FuzzCursor(f *testing.F)     { fuzzHost(f, SourceCursor, ".cursor/mcp.json") }
func FuzzVSCode(f *testing.F)     { fuzzHost(f, SourceVSCode, ".config/Code/User/mcp.json") }
func FuzzVSCodeSettings(f *testing.F) {
	fuzzHost(f, SourceVSCode, ".config/Code/User/settings.json")
}
func FuzzWindsurf(f *testing.F) { fuzzHost(f, SourceWindsurf, ".codeium/windsurf/mcp_config.json") }
func FuzzOpencode(f *testing.F) { fuzzHost(f, SourceOpencode, ".config/opencode/opencode.json") }
func FuzzGoose(f *testing.F)    { fuzzHost(f, SourceGoose, ".config/goose/config.yaml") }
func FuzzZed(f *testing.F)      { fuzzHost(f, SourceZed, ".config/zed/settings.json") }
func FuzzCodex(f *testing.F)    { fuzzHost(f, SourceCodex, ".codex/config.toml") }
func FuzzGemini(f *testing.F)   { fuzzHost(f, SourceGemini, ".gemini/settings.json") }

// FuzzReferences checks the dialects on any string: none panics, a text
// with no reference syntax comes out as it went in, a host that expands
// nothing only has its "${" escaped, and the escape reads back.
func FuzzReferences(f *testing.F) {
	for _, s := range []string{"${A:-a${B}}", "pa$sword", "${A}", "$${A}", "${A:-x}", "${env:A}", "${input:id}", "{env:A}", "$A", "pa$$w0rd", "${", "}", "${}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		vars := editorVars{host: "VS Code", home: "/h", workspace: "/w", sep: "/"}
		plain := !strings.ContainsAny(s, "${")
		for _, d := range []dialect{literalDialect, shellDialect, geminiDialect, opencodeDialect, vars.dialect()} {
			out := newMapping(d).text("f", s)
			if plain && out != s {
				t.Fatalf("%q, with no reference syntax, became %q", s, out)
			}
			if _, err := config.ReferencedNames(out); err != nil {
				t.Fatalf("%q became %q, which mcpvisor cannot read: %v", s, out, err)
			}
		}
		if out := newMapping(literalDialect).text("f", s); out != config.EscapeLiteral(s) {
			t.Fatalf("literal %q became %q", s, out)
		}
		if out := config.EscapeLiteral(s); unescape(out) != s {
			t.Fatalf("escape(%q) = %q does not read back", s, out)
		}
	})
}

// unescape reads K1 text with no references: "$${" is a literal "${".
func unescape(s string) string {
	var out []byte
	for i := 0; i < len(s); i++ {
		if s[i] == '$' && i+2 < len(s) && s[i+1] == '$' && s[i+2] == '{' {
			out = append(out, '$', '{')
			i += 2
			continue
		}
		out = append(out, s[i])
	}
	return string(out)
}

// mappedStrings is every value of cfg that may hold references.
func mappedStrings(cfg serverConfig) []string {
	out := append([]string{cfg.Cwd, cfg.URL}, cfg.Command...)
	for _, v := range cfg.Env {
		out = append(out, v)
	}
	for _, v := range cfg.Headers {
		out = append(out, v)
	}
	if cfg.Auth != nil {
		out = append(out, cfg.Auth.Token, cfg.Auth.ClientSecret)
	}
	return out
}
