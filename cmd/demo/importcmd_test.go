package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openprogram/mcpvisor/catalog"
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

// A save of the state dir's file between import's read and write (a
// running demo run's) is not overwritten: the import reads the file again
// and adds to it; a second change refuses with nothing saved.
func TestImportFileChangedMeanwhile(t *testing.T) {
	_, stateDir := importHome(t)
	store := config.Store{Dir: func() (string, error) { return stateDir, nil }}
	entries := []catalog.Entry{{Source: catalog.SourceClaudeCode, File: "f", Name: "fresh", Config: []byte(`{"type": "local", "command": ["fresh-mcp"]}`)}}
	saveMeanwhile := func(name string) func() {
		return func() {
			f, err := store.Load()
			if err != nil {
				t.Fatal(err)
			}
			f.Put(config.Server{Name: name, Type: config.TypeLocal, Command: []string{name}, Enabled: true})
			if err := store.Save(f); err != nil {
				t.Fatal(err)
			}
		}
	}
	calls := 0
	once := saveMeanwhile("meanwhile")
	var out bytes.Buffer
	err := importInto(&out, store, entries, nil, false, func() {
		if calls++; calls == 1 {
			once()
		}
	})
	if err != nil || calls != 2 || !strings.Contains(out.String(), "changed while importing") {
		t.Fatalf("err %v after %d checks:\n%s", err, calls, out.String())
	}
	// The save meanwhile added a server the diff does not list: the
	// diff is printed once, then said to be the same.
	if n := strings.Count(out.String(), "add      fresh "); n != 1 || !strings.Contains(out.String(), "the diff against it is the same") {
		t.Errorf("the diff printed %d times:\n%s", n, out.String())
	}
	f, err := store.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"meanwhile", "fresh", "same", "other"} {
		if _, ok := f.Get(name); !ok {
			t.Errorf("%s is not in the file after the import", name)
		}
	}

	// A save meanwhile that changes the diff (it adds the server being
	// imported) has the new diff printed, saying so.
	out.Reset()
	calls = 0
	entries[0].Name = "fresh1"
	err = importInto(&out, store, entries, nil, false, func() {
		if calls++; calls == 1 {
			saveMeanwhile("fresh1")()
		}
	})
	if err != nil || !strings.Contains(out.String(), "the diff against it changed:\n") || !strings.Contains(out.String(), "conflict fresh1 ") {
		t.Errorf("a changed diff: %v\n%s", err, out.String())
	}

	n := 0
	entries[0].Name = "fresh2"
	before, _ := os.ReadFile(filepath.Join(stateDir, config.FileName))
	err = importInto(&out, store, entries, nil, false, func() { n++; saveMeanwhile(fmt.Sprintf("again%d", n))() })
	if err == nil || !strings.Contains(err.Error(), "nothing saved") {
		t.Fatalf("two changes: %v", err)
	}
	after, _ := os.ReadFile(filepath.Join(stateDir, config.FileName))
	if f, _ := config.Parse(after); f == nil || len(f.Servers) != len(mustParse(t, before).Servers)+2 {
		t.Errorf("the refused import changed the file beyond the two saves meanwhile")
	} else if _, ok := f.Get("fresh2"); ok {
		t.Error("the refused import saved its server")
	}
}

func mustParse(t *testing.T, data []byte) *config.File {
	t.Helper()
	f, err := config.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// A -from FILE of a JSON host is read up to the catalog's file bound, not
// the settings bound: a ~/.claude.json heavy with history imports. (The
// test file is 2 MiB to stay fast; the limits are asserted.)
func TestImportFromLargeClaudeFile(t *testing.T) {
	if fromFileLimit("claude-code") != catalog.MaxFileBytes || fromFileLimit("mcpvisor") != config.MaxFileSize {
		t.Errorf("-from limits: claude-code %d, mcpvisor %d", fromFileLimit("claude-code"), fromFileLimit("mcpvisor"))
	}
	_, stateDir := importHome(t)
	path := filepath.Join(t.TempDir(), ".claude.json")
	history := `{"display": "` + strings.Repeat("h", 1000) + `"}`
	big := `{"projects": {"/p": {"history": [` + strings.TrimSuffix(strings.Repeat(history+",", 2<<10), ",") + `]}}, "mcpServers": {"big": {"command": "big-mcp"}}}`
	if err := os.WriteFile(path, []byte(big), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runImportT(t, "-from", path, "-state-dir", stateDir, "-dry-run")
	if code != 0 || !strings.Contains(out, "add      big (claude-code "+path+")") {
		t.Errorf("from a %d-byte .claude.json: %d %s %s", len(big), code, out, errOut)
	}
}

// A -from FILE of a format the catalog parses whole (JSONC, YAML, TOML)
// is refused over the catalog's bound for it, before it is read, naming
// the file and the limit; a JSON host's file is not.
func TestImportFromFileBoundedByFormat(t *testing.T) {
	_, stateDir := importHome(t)
	dir := t.TempDir()
	for _, c := range []struct{ name, body string }{
		{"config.yaml", "extensions: {}\n"},
		{"config.toml", "[mcp_servers]\n"},
		{"opencode.jsonc", `{"mcp": {}}`},
	} {
		path := filepath.Join(dir, c.name)
		if err := os.WriteFile(path, []byte(c.body+strings.Repeat("\n", catalog.MaxSettingsBytes)), 0o600); err != nil {
			t.Fatal(err)
		}
		code, _, errOut := runImportT(t, "-from", path, "-state-dir", stateDir, "-dry-run")
		if want := fmt.Sprintf("%s is %d bytes, over the limit of %d bytes for a ", path, len(c.body)+catalog.MaxSettingsBytes, catalog.MaxSettingsBytes); code != 2 || !strings.Contains(errOut, want) {
			t.Errorf("%s: %d %s", c.name, code, errOut)
		}
	}
	if fromFileLimit("cursor") != catalog.MaxSettingsBytes || fromFileLimit("claude-desktop") != catalog.MaxFileBytes {
		t.Errorf("-from limits: cursor %d, claude-desktop %d", fromFileLimit("cursor"), fromFileLimit("claude-desktop"))
	}
}

// The printed diff shows, under each server, the variables its references
// need and what of the host's entry was not carried.
func TestImportPrintsRequiresAndWarnings(t *testing.T) {
	_, stateDir := importHome(t)
	path := filepath.Join(t.TempDir(), ".claude.json")
	claude := `{"mcpServers": {"needs": {"command": "n", "env": {"T": "${NEEDED_TOKEN}"}, "headersHelper": "x"}}}`
	if err := os.WriteFile(path, []byte(claude), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runImportT(t, "-from", path, "-state-dir", stateDir)
	if code != 0 {
		t.Fatalf("%d %s", code, errOut)
	}
	for _, want := range []string{"add      needs ", "requires NEEDED_TOKEN", "warning headersHelper: "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
