package catalog

import (
	"slices"
	"strings"
	"testing"

	"github.com/openprogram/mcpvisor/config"
)

func TestDialects(t *testing.T) {
	user := editorVars{host: "VS Code", home: "/home/u", sep: "/"}.dialect()
	windsurf := editorVars{host: "Windsurf", home: "/home/u", workspace: "/work/app", sep: "/", envOnly: true}.dialect()
	project := editorVars{host: "Cursor", home: "/home/u", workspace: "/work/app", sep: `\`}.dialect()
	for _, c := range []struct {
		name     string
		d        dialect
		in, out  string
		warnings int
	}{
		{"literal keeps ${ literal", literalDialect, "${HOME}/x and $${y}", "$${HOME}/x and $$${y}", 0},
		{"literal keeps $ alone", literalDialect, "pa$$w0rd $HOME", "pa$$w0rd $HOME", 0},
		{"claude code var", shellDialect, "${API_TOKEN}", "${API_TOKEN}", 0},
		{"claude code default", shellDialect, "${PORT:-8080}/x", "${PORT:-8080}/x", 0},
		{"claude code not a var", shellDialect, "${not a var}", "$${not a var}", 0},
		{"claude code $ before ref", shellDialect, "$${A}", "$${A}", 1},
		{"gemini $VAR", geminiDialect, "Bearer $TOKEN", "Bearer ${TOKEN}", 1},
		{"gemini ${VAR}", geminiDialect, "${TOKEN}-x", "${TOKEN}-x", 0},
		{"gemini default is literal", geminiDialect, "${A:-b}", "$${A:-b}", 0},
		{"gemini lone $", geminiDialect, "cost $ 5", "cost $ 5", 0},
		{"opencode env", opencodeDialect, "Bearer {env:KEY}", "Bearer ${KEY:-}", 0},
		{"opencode file", opencodeDialect, "{file:~/.key}", "{file:~/.key}", 1},
		{"opencode literal ${", opencodeDialect, "${KEY}", "$${KEY}", 0},
		{"editor env", user, "${env:KEY}", "${KEY:-}", 0},
		{"editor input", user, "Bearer ${input:github-token}", "Bearer ${GITHUB_TOKEN}", 1},
		{"editor userHome", user, "${userHome}/bin", "/home/u/bin", 0},
		{"windsurf has no userHome", windsurf, "${userHome}/bin", "$${userHome}/bin", 1},
		{"windsurf has no workspaceFolder", windsurf, "${workspaceFolder}", "$${workspaceFolder}", 1},
		{"windsurf env", windsurf, "Bearer ${env:T}", "Bearer ${T:-}", 0},
		{"editor workspace in a user file", user, "${workspaceFolder}/x", "$${workspaceFolder}/x", 1},
		{"editor workspace", project, "${workspaceFolder}${pathSeparator}${workspaceFolderBasename}${/}", `/work/app\app\`, 0},
		{"editor unknown", project, "${command:pick}", "$${command:pick}", 1},
		{"editor file", project, "${file:/k}", "$${file:/k}", 1},
	} {
		m := newMapping(c.d)
		if got := m.text("f", c.in); got != c.out || len(m.warnings) != c.warnings {
			t.Errorf("%s: %q → %q with %q, want %q with %d warnings", c.name, c.in, got, m.warnings, c.out, c.warnings)
		}
	}
}

func TestInputVariable(t *testing.T) {
	for in, want := range map[string]string{"github-token": "GITHUB_TOKEN", "api_key": "API_KEY", "1st": "_ST", "": "INPUT"} {
		if got := inputVariable(in); got != want {
			t.Errorf("inputVariable(%q) = %q, want %q", in, got, want)
		}
	}
}

// The per-OS folders of Claude Desktop, VS Code, goose and Zed.
func TestPerOSFolders(t *testing.T) {
	for goos, files := range map[string]map[Source]string{
		"darwin": {
			SourceClaudeDesktop: "Library/Application Support/Claude/claude_desktop_config.json",
			SourceVSCode:        "Library/Application Support/Code/User/mcp.json",
			SourceGoose:         ".config/goose/config.yaml",
			SourceZed:           ".config/zed/settings.json",
		},
		"windows": {
			SourceClaudeDesktop: "AppData/Roaming/Claude/claude_desktop_config.json",
			SourceVSCode:        "AppData/Roaming/Code/User/mcp.json",
			SourceGoose:         "AppData/Roaming/Block/goose/config/config.yaml",
			SourceZed:           "AppData/Roaming/Zed/settings.json",
		},
		"linux": {
			SourceClaudeDesktop: ".config/Claude/claude_desktop_config.json",
			SourceVSCode:        ".config/Code/User/mcp.json",
			SourceGoose:         ".config/goose/config.yaml",
			SourceZed:           ".config/zed/settings.json",
		},
	} {
		home := t.TempDir()
		for src, rel := range files {
			writeFile(t, home, rel, map[Source]string{
				SourceClaudeDesktop: `{"mcpServers": {"s": {"command": "x"}}}`,
				SourceVSCode:        `{"servers": {"s": {"command": "x"}}}`,
				SourceGoose:         "extensions:\n  s:\n    type: stdio\n    cmd: x\n",
				SourceZed:           `{"context_servers": {"s": {"command": "x"}}}`,
			}[src])
		}
		entries, warnings := List(Options{Home: home, GOOS: goos})
		if len(warnings) != 0 {
			t.Fatal(warnings)
		}
		got := map[Source]string{}
		for _, e := range hostEntries(entries) {
			got[e.Source] = e.File
		}
		for src, rel := range files {
			if want := home + "/" + rel; got[src] != want {
				t.Errorf("%s %s: read %q, want %q", goos, src, got[src], want)
			}
		}
		if len(got) != len(files) {
			t.Errorf("%s: %d sources, want %d", goos, len(got), len(files))
		}
	}
}

// Entries are sorted by source, file and name, whatever the files' order.
func TestEntriesAreSorted(t *testing.T) {
	home, project := fakeMachine(t)
	entries, _ := List(Options{Home: home, Projects: []string{project}, GOOS: "linux"})
	if !slices.IsSortedFunc(entries, compareEntries) {
		t.Error("not sorted")
	}
	again, _ := List(Options{Home: home, Projects: []string{project}, GOOS: "linux"})
	for i := range entries {
		if string(entries[i].Config) != string(again[i].Config) {
			t.Fatalf("entry %d differs between two listings", i)
		}
	}
}

// Two spellings of one header would make config refuse the entry: the
// later one is kept, with a warning.
func TestHeaderSpellingsAreOneHeader(t *testing.T) {
	m := newMapping(literalDialect)
	m.headers(map[string]string{"authorization": "a", "Authorization": "b", "X-Key": "c"})
	if len(m.cfg.Headers) != 2 || m.cfg.Headers["authorization"] != "a" || m.cfg.Headers["X-Key"] != "c" || len(m.warnings) != 1 {
		t.Errorf("headers %v, warnings %q", m.cfg.Headers, m.warnings)
	}
}

// Gemini CLI keeps an unset bare $NAME literal, so each one rewritten to
// ${NAME} is a warning that does not quote it; a Claude Code form mcpvisor
// rejects is kept literal with a warning, so the value stays readable.
func TestRewrittenReferencesChecked(t *testing.T) {
	m := newMapping(geminiDialect)
	if out := m.text("env.P", "pa$sword and $HOME"); out != "pa${sword} and ${HOME}" || len(m.warnings) != 2 ||
		strings.Contains(strings.Join(m.warnings, " "), "sword") || !strings.HasPrefix(m.warnings[0], "env.P: ") {
		t.Errorf("gemini: %q, warnings %q", out, m.warnings)
	}
	if m := newMapping(geminiDialect); m.text("f", "${HOME}") != "${HOME}" || len(m.warnings) != 0 {
		t.Errorf("gemini ${HOME}: warnings %q", m.warnings)
	}
	m = newMapping(shellDialect)
	out := m.text("env.X", "${VAR:-a${B}}")
	if names, err := config.ReferencedNames(out); err != nil || len(names) != 0 || len(m.warnings) != 1 {
		t.Errorf("shell: %q (%v %v), warnings %q", out, names, err, m.warnings)
	}
	if got, _ := config.ExpandValue(out, func(string) (string, bool) { return "", false }); got != "${VAR:-a${B}}" {
		t.Errorf("shell: %q does not read back literally: %q", out, got)
	}
}
