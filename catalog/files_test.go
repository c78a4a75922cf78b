package catalog

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// hostFiles is each host's user file under the home (GOOS linux) and a
// corrupt version of it whose broken part is a planted secret.
var hostFiles = []struct {
	source  Source
	rel     string
	corrupt []string
	limit   int64
}{
	{SourceClaudeDesktop, ".config/Claude/claude_desktop_config.json", corruptJSON("mcpServers"), MaxFileBytes},
	{SourceClaudeCode, ".claude.json", corruptJSON("mcpServers"), MaxFileBytes},
	{SourceCursor, ".cursor/mcp.json", corruptJSON("mcpServers"), MaxSettingsBytes},
	{SourceVSCode, ".config/Code/User/mcp.json", corruptJSON("servers"), MaxSettingsBytes},
	{SourceWindsurf, ".codeium/windsurf/mcp_config.json", corruptJSON("mcpServers"), MaxSettingsBytes},
	{SourceOpencode, ".config/opencode/opencode.json", corruptJSON("mcp"), MaxSettingsBytes},
	{SourceGoose, ".config/goose/config.yaml", []string{
		"extensions:\n  x:\n    envs: [MARKER-corrupt\n",
		"extensions: MARKER-corrupt\n",
		"extensions:\n  x:\n    envs:\n      K: MARKER-corrupt\n     bad: indent\n",
		"extensions:\n  x:\n    args: " + strings.Repeat("[", 4<<20),
	}, MaxSettingsBytes},
	{SourceZed, ".config/zed/settings.json", corruptJSON("context_servers"), MaxSettingsBytes},
	{SourceCodex, ".codex/config.toml", []string{
		"[mcp_servers.x]\nenv = { K = MARKER-corrupt }\n",
		"mcp_servers = \"MARKER-corrupt\"\n",
		"[mcp_servers.x]\ncommand = \"MARKER-corrupt\n",
		"[mcp_servers.x]\nargs = " + strings.Repeat("[", 4<<20),
		"[mcp_servers.x]\nenv = " + strings.Repeat("{a=", 1<<20),
	}, MaxSettingsBytes},
	{SourceGemini, ".gemini/settings.json", corruptJSON("mcpServers"), MaxSettingsBytes},
}

func corruptJSON(key string) []string {
	return []string{
		`{"` + key + `": {"x": {"env": {"K": MARKER-corrupt}}}}`,
		`{"` + key + `": {"x": {"env": {"K": "MARKER-corrupt"}}}`,
		`{"` + key + `": {"x": {"env": {"K": "MARKER-corrupt"}}}} "MARKER-corrupt"`,
		`["MARKER-corrupt"]`,
		`{"` + key + `": "MARKER-corrupt"}`,
		"\"MARKER-corrupt",
		"",
		// Deeper than any parser should recurse: a warning, not a crash.
		`{"` + key + `": {"x": {"env": ` + strings.Repeat("[", 4<<20),
		`{"` + key + `": ` + strings.Repeat(`{"a":`, 1<<20),
	}
}

// checkOneWarning lists the fake machine and checks that the file at rel gave
// exactly one warning, naming it, and no entry, while every other entry is
// there as without the problem.
func checkOneWarning(t *testing.T, home, project string, source Source, file string, baseline []Entry, wantMsg string) {
	t.Helper()
	entries, warnings := List(Options{Home: home, Projects: []string{project}, GOOS: "linux"})
	if len(warnings) != 1 || warnings[0].Source != source || warnings[0].File != file {
		t.Fatalf("warnings %v, want one for %s %s", warnings, source, file)
	}
	if warnings[0].Message == "" || !strings.Contains(warnings[0].Message, wantMsg) {
		t.Errorf("warning %q, want it to say %q", warnings[0].Message, wantMsg)
	}
	if text := warningText(entries, warnings); strings.Contains(text, "MARKER") {
		t.Errorf("a warning holds the planted secret: %s", text)
	}
	var want []Entry
	for _, e := range baseline {
		if e.File != file && !strings.HasPrefix(e.File, file+"#") {
			want = append(want, e)
		}
	}
	if len(entries) != len(want) {
		t.Fatalf("%d entries, want %d", len(entries), len(want))
	}
	for i := range want {
		if entries[i].Source != want[i].Source || entries[i].File != want[i].File || entries[i].Name != want[i].Name {
			t.Errorf("entry %d is %s %s, want %s %s", i, entries[i].Source, entries[i].Name, want[i].Source, want[i].Name)
		}
	}
}

func TestCorruptFileIsOneWarning(t *testing.T) {
	home, project := fakeMachine(t)
	baseline, _ := List(Options{Home: home, Projects: []string{project}, GOOS: "linux"})
	for _, h := range hostFiles {
		path := filepath.Join(home, h.rel)
		good, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, bad := range h.corrupt {
			t.Run(string(h.source), func(t *testing.T) {
				writeFile(t, home, h.rel, bad)
				checkOneWarning(t, home, project, h.source, path, baseline, "")
			})
		}
		writeFile(t, home, h.rel, string(good))
	}
}

func TestUnreadableFilesAreOneWarning(t *testing.T) {
	home, project := fakeMachine(t)
	baseline, _ := List(Options{Home: home, Projects: []string{project}, GOOS: "linux"})
	outside := t.TempDir()
	for _, h := range hostFiles {
		path := filepath.Join(home, h.rel)
		good, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		restore := func() {
			os.RemoveAll(path)
			writeFile(t, home, h.rel, string(good))
		}
		t.Run(string(h.source)+"/symlink-out-of-home", func(t *testing.T) {
			defer restore()
			target := writeFile(t, outside, string(h.source), string(good))
			os.Remove(path)
			if err := os.Symlink(target, path); err != nil {
				t.Fatal(err)
			}
			checkOneWarning(t, home, project, h.source, path, baseline, "outside the home directory")
		})
		t.Run(string(h.source)+"/directory", func(t *testing.T) {
			defer restore()
			os.Remove(path)
			if err := os.Mkdir(path, 0o755); err != nil {
				t.Fatal(err)
			}
			checkOneWarning(t, home, project, h.source, path, baseline, "not a regular file")
		})
		t.Run(string(h.source)+"/fifo", func(t *testing.T) {
			defer restore()
			os.Remove(path)
			if err := syscall.Mkfifo(path, 0o600); err != nil {
				t.Skip("no FIFO here:", err)
			}
			// No check by path comes first: the open itself must not
			// block on a FIFO with no writer (a test that hangs fails).
			checkOneWarning(t, home, project, h.source, path, baseline, "not a regular file")
		})
		t.Run(string(h.source)+"/too-large", func(t *testing.T) {
			defer restore()
			// A sparse file: the size is checked before a byte is read.
			if err := os.Truncate(path, h.limit+1); err != nil {
				t.Fatal(err)
			}
			checkOneWarning(t, home, project, h.source, path, baseline, "over the limit")
		})
		t.Run(string(h.source)+"/no-permission", func(t *testing.T) {
			defer restore()
			if os.Geteuid() == 0 {
				t.Skip("root reads a file of mode 0000")
			}
			if err := os.Chmod(path, 0); err != nil {
				t.Fatal(err)
			}
			checkOneWarning(t, home, project, h.source, path, baseline, "cannot open")
		})
		t.Run(string(h.source)+"/dangling-symlink", func(t *testing.T) {
			defer restore()
			os.Remove(path)
			if err := os.Symlink(filepath.Join(outside, "gone"), path); err != nil {
				t.Fatal(err)
			}
			// A dangling link is a file that is not there: no warning.
			entries, warnings := List(Options{Home: home, Projects: []string{project}, GOOS: "linux"})
			if len(warnings) != 0 || len(entries) >= len(baseline) {
				t.Errorf("%d warnings, %d of %d entries", len(warnings), len(entries), len(baseline))
			}
		})
	}
}

// A symlink that stays inside the home, or points from a project into the
// home, is read as the file it points to.
func TestSymlinkInsideAllowedFoldersIsRead(t *testing.T) {
	home, project := fakeMachine(t)
	baseline, _ := List(Options{Home: home, Projects: []string{project}, GOOS: "linux"})
	dotfiles := filepath.Join(home, "dotfiles")
	if err := os.MkdirAll(dotfiles, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(home, ".cursor", "mcp.json")
	moved := filepath.Join(dotfiles, "cursor-mcp.json")
	if err := os.Rename(path, moved); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(moved, path); err != nil {
		t.Fatal(err)
	}
	projFile := filepath.Join(project, ".mcp.json")
	data, _ := os.ReadFile(projFile)
	inHome := writeFile(t, home, "shared-mcp.json", string(data))
	os.Remove(projFile)
	if err := os.Symlink(inHome, projFile); err != nil {
		t.Fatal(err)
	}
	entries, warnings := List(Options{Home: home, Projects: []string{project}, GOOS: "linux"})
	if len(warnings) != 0 {
		t.Fatal(warnings)
	}
	if len(entries) != len(baseline) {
		t.Fatalf("%d entries, want %d", len(entries), len(baseline))
	}
	for i := range entries {
		if entries[i].File != baseline[i].File || string(entries[i].Config) != string(baseline[i].Config) {
			t.Errorf("entry %d: %s %s, want %s", i, entries[i].File, entries[i].Config, baseline[i].Config)
		}
	}
}

// A symlink swapped in between resolving a host file and opening it — for
// the file itself or for a folder on its way — is not followed out of
// the home directory: the file is a warning, and nothing outside is read.
func TestSymlinkSwappedInAfterResolveNotFollowed(t *testing.T) {
	const marker = "MARKER-swapped-outside"
	for _, swap := range []string{".cursor/mcp.json", ".cursor"} {
		t.Run(swap, func(t *testing.T) {
			home, outside := t.TempDir(), t.TempDir()
			path := writeFile(t, home, ".cursor/mcp.json", `{"mcpServers": {"in": {"command": "inside"}}}`)
			writeFile(t, outside, "mcp.json", `{"mcpServers": {"out": {"command": "`+marker+`"}}}`)
			r := newFileReader(Options{Home: home})
			r.resolved = func(string) {
				old := filepath.Join(home, swap)
				if err := os.RemoveAll(old); err != nil {
					t.Fatal(err)
				}
				target := outside
				if swap == ".cursor/mcp.json" {
					target = filepath.Join(outside, "mcp.json")
				}
				if err := os.Symlink(target, old); err != nil {
					t.Fatal(err)
				}
			}
			f, err := r.open(path, MaxSettingsBytes)
			if err == nil {
				data := make([]byte, 256)
				n, _ := f.Read(data)
				f.Close()
				if strings.Contains(string(data[:n]), marker) {
					t.Fatal("read the file outside the home through a symlink swapped in")
				}
				t.Fatal("opened a file through a symlink swapped in")
			}
			if strings.Contains(err.Error(), marker) || !strings.Contains(err.Error(), "within the home directory") {
				t.Errorf("error: %v", err)
			}
		})
	}
}
