package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openprogram/mcpvisor/config"
)

const importSecret = "IMPORT-SECRET-planted-0d4c9e"

// importHome writes a fake home with a Claude Code file of three servers:
// "fresh" (new, with a reference and a planted secret), "same" (as the
// state dir has it) and "other" (a conflict: another command).
func importHome(t *testing.T) (home, stateDir string) {
	t.Helper()
	home, stateDir = t.TempDir(), t.TempDir()
	claude := `{"mcpServers": {
		"fresh": {"command": "fresh-mcp", "env": {"TOKEN": "${GITHUB_TOKEN}", "KEY": "` + importSecret + `"}},
		"same": {"command": "same-mcp"},
		"other": {"command": "other-mcp"},
		"bad name!": {"command": "x"}
	}}`
	if err := os.WriteFile(filepath.Join(home, ".claude.json"), []byte(claude), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := `{"servers": {"same": {"type": "local", "command": ["same-mcp"]}, "other": {"type": "local", "command": ["mine"]}}}`
	if err := os.WriteFile(filepath.Join(stateDir, config.FileName), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return home, stateDir
}

func runImportT(t *testing.T, args ...string) (code int, out, errOut string) {
	t.Helper()
	var o, e bytes.Buffer
	code = runImport(&o, &e, args)
	if strings.Contains(o.String()+e.String(), importSecret) {
		t.Errorf("import output shows the planted secret")
	}
	return code, o.String(), e.String()
}

// demo import prints the masked diff; -dry-run changes nothing; without
// it the "add" servers are added, the reference kept, and the others
// skipped with their reason.
func TestImport(t *testing.T) {
	home, stateDir := importHome(t)
	file := filepath.Join(stateDir, config.FileName)
	before, _ := os.ReadFile(file)
	code, out, errOut := runImportT(t, "-from", "claude-code", "-home", home, "-state-dir", stateDir, "-dry-run")
	if code != 0 {
		t.Fatalf("dry run: %d %s", code, errOut)
	}
	for _, want := range []string{"add      fresh (claude-code ", "same     same ", "conflict other ", ": command", "invalid  bad name! ", "dry run: nothing changed"} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run output lacks %q:\n%s", want, out)
		}
	}
	if after, _ := os.ReadFile(file); !bytes.Equal(before, after) {
		t.Error("a dry run changed the file")
	}

	code, out, errOut = runImportT(t, "--from", "claude-code", "--home", home, "--state-dir", stateDir)
	if code != 0 {
		t.Fatalf("import: %d %s", code, errOut)
	}
	for _, want := range []string{"skipped same ", ": same", "skipped other ", ": conflict", "skipped bad name! ", "added fresh to "} {
		if !strings.Contains(out, want) {
			t.Errorf("import output lacks %q:\n%s", want, out)
		}
	}
	f, err := config.Store{Dir: func() (string, error) { return stateDir, nil }}.Load()
	if err != nil {
		t.Fatal(err)
	}
	fresh, ok := f.Get("fresh")
	if !ok || fresh.Env["TOKEN"] != "${GITHUB_TOKEN}" || fresh.Env["KEY"] != importSecret || len(f.Servers) != 3 {
		t.Errorf("the file after import: %d servers, fresh %v", len(f.Servers), ok)
	}
	if other, _ := f.Get("other"); other.Command[0] != "mine" {
		t.Error("import replaced a conflicting server")
	}

	// A second import has nothing to add.
	if _, out, _ := runImportT(t, "-home", home, "-state-dir", stateDir); !strings.Contains(out, "nothing to add") || !strings.Contains(out, "same     fresh ") {
		t.Errorf("second import:\n%s", out)
	}
}

// -from FILE reads one file in the format its name says, or -format.
func TestImportFromFile(t *testing.T) {
	_, stateDir := importHome(t)
	dir := t.TempDir()
	desktop := filepath.Join(dir, "claude_desktop_config.json")
	if err := os.WriteFile(desktop, []byte(`{"mcpServers": {"d": {"command": "d-mcp", "env": {"K": "`+importSecret+`"}}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runImportT(t, "-from", desktop, "-state-dir", stateDir, "-dry-run")
	if code != 0 || !strings.Contains(out, "add      d (claude-desktop "+desktop+")") {
		t.Errorf("from a desktop file: %d %s %s", code, out, errOut)
	}
	odd := filepath.Join(dir, "servers.txt")
	if err := os.WriteFile(odd, []byte(`{"servers": {"m": {"type": "local", "command": ["m"]}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runImportT(t, "-from", odd, "-state-dir", stateDir); code != 2 || !strings.Contains(errOut, "-format") {
		t.Errorf("unknown format: %d %s", code, errOut)
	}
	if code, out, _ := runImportT(t, "-from", odd, "-format", "mcpvisor", "-state-dir", stateDir, "-dry-run"); code != 0 || !strings.Contains(out, "add      m ("+odd+")") {
		t.Errorf("-format mcpvisor: %d %s", code, out)
	}
	if code, _, _ := runImportT(t, "-from", filepath.Join(dir, "missing.json"), "-format", "cursor", "-state-dir", stateDir); code != 2 {
		t.Errorf("missing file: %d", code)
	}
}
