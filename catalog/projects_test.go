package catalog

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// geminiRelCwd is a Gemini CLI server with a relative cwd: resolved
// against the project folder of a project file, dropped with a warning in
// a user file.
const geminiRelCwd = `{"mcpServers": {"s": {"command": "python", "cwd": "./mcp_tools"}}}`

// cwdOf is the mapped cwd of e.
func cwdOf(t *testing.T, e Entry) string {
	t.Helper()
	var c struct {
		Cwd string `json:"cwd"`
	}
	if err := json.Unmarshal(e.Config, &c); err != nil {
		t.Fatal(err)
	}
	return c.Cwd
}

// A relative home or project folder (demo's -project .) is made absolute:
// the entries' files and the cwd resolved against the project are
// absolute, as mcpvisor requires of a cwd.
func TestRelativeFoldersMadeAbsolute(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "home/.cursor/mcp.json", `{"mcpServers": {"u": {"command": "x"}}}`)
	writeFile(t, root, "proj/.gemini/settings.json", geminiRelCwd)
	writeFile(t, root, "proj/.cursor/mcp.json", `{"mcpServers": {"w": {"command": "${workspaceFolder}/bin/x"}}}`)
	t.Chdir(root)
	entries, warnings := List(Options{Home: "home", Projects: []string{"proj", "./proj/"}, GOOS: "linux",
		Sources: []Source{SourceCursor, SourceGemini}})
	if len(warnings) != 0 {
		t.Fatalf("warnings %v", warnings)
	}
	byName := map[string]Entry{}
	for _, e := range entries {
		if !filepath.IsAbs(e.File) {
			t.Errorf("%s: file %q is relative", e.Name, e.File)
		}
		if _, dup := byName[e.Name]; dup {
			t.Errorf("%s listed twice (one project given twice)", e.Name)
		}
		byName[e.Name] = e
	}
	if len(byName) != 3 {
		t.Fatalf("entries %v", entries)
	}
	if got, want := cwdOf(t, byName["s"]), filepath.Join(root, "proj", "mcp_tools"); got != want {
		t.Errorf("cwd %q, want %q", got, want)
	}
	if got := string(byName["w"].Config); !strings.Contains(got, `"`+filepath.Join(root, "proj", "bin", "x")+`"`) {
		t.Errorf("${workspaceFolder} mapped to %s", got)
	}
}

// A project folder that is the home directory, or holds it, leaves the
// user's files their user scope: each is listed once, as the user's file
// (not also as the project's, nor with the project's cwd), while the
// project's own files (~/.mcp.json of a project at ~) are the project's.
// A project file that is a symlink to a file read already is not listed
// again either.
func TestProjectHoldingHomeKeepsUserScope(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	writeFile(t, home, ".cursor/mcp.json", `{"mcpServers": {"cu": {"command": "x"}}}`)
	writeFile(t, home, ".gemini/settings.json", geminiRelCwd)
	writeFile(t, home, ".codex/config.toml", "[mcp_servers.cx]\ncommand = \"x\"\n")
	writeFile(t, home, ".mcp.json", `{"mcpServers": {"cc": {"command": "x"}}}`)
	other := filepath.Join(root, "other")
	if err := os.MkdirAll(filepath.Join(other, ".cursor"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(home, ".cursor", "mcp.json"), filepath.Join(other, ".cursor", "mcp.json")); err != nil {
		t.Fatal(err)
	}
	sources := []Source{SourceCursor, SourceGemini, SourceCodex, SourceClaudeCode}
	for _, projects := range [][]string{{home}, {root}, {home, root, other}} {
		entries, warnings := List(Options{Home: home, Projects: projects, GOOS: "linux", Sources: sources})
		if len(warnings) != 0 {
			t.Errorf("projects %q: warnings %v", projects, warnings)
		}
		var got []string
		for _, e := range entries {
			got = append(got, e.Name+" "+strings.TrimPrefix(e.File, root))
			if e.Name == "s" && (cwdOf(t, e) != "" || !slices.ContainsFunc(e.Warnings, func(w string) bool { return strings.HasPrefix(w, "cwd:") })) {
				t.Errorf("projects %q: the user's gemini entry was given a project cwd %q", projects, cwdOf(t, e))
			}
		}
		want := []string{"cc /home/.mcp.json", "cx /home/.codex/config.toml", "cu /home/.cursor/mcp.json", "s /home/.gemini/settings.json"}
		if !slices.Contains(projects, home) {
			want = want[1:] // ~/.mcp.json is a project file of ~ only
		}
		if !slices.Equal(got, want) {
			t.Errorf("projects %q: entries\n got %q\nwant %q", projects, got, want)
		}
	}
}

// A folder whose name starts with ".." is inside its parent.
func TestInsideTakesDotDotNames(t *testing.T) {
	root := t.TempDir()
	r := &fileReader{roots: []string{root}}
	for path, want := range map[string]bool{
		filepath.Join(root, "..foo", "mcp.json"): true,
		filepath.Join(root, "..", "mcp.json"):    false,
		root:                                     true,
		filepath.Dir(root):                       false,
	} {
		if _, _, got := r.inside(path); got != want {
			t.Errorf("inside(%q) = %v, want %v", path, got, want)
		}
	}
}
