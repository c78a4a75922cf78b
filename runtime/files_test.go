//go:build unix

package runtime

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/internal/testutil"
)

// TestConfigFileTooLarge: a 5 MiB config file (valid JSON, so only its
// size is wrong) is refused with a config_error naming the limit; the
// runtime starts with no servers and a write never replaces the file.
func TestConfigFileTooLarge(t *testing.T) {
	head := `{"servers": {"ex": {"type": "local", "command": ["x"], "env": {"K": "`
	tail := `"}}}}`
	huge := []byte(head + strings.Repeat("a", 5<<20-len(head)-len(tail)) + tail)
	rt := startWithFile(t, huge)
	api := newAPI(t, rt)
	var list serverList
	api.do("GET", "/api/mcp/servers", "").want(t, http.StatusOK).decode(t, &list)
	if len(list.Servers) != 0 || !strings.Contains(list.ConfigError, "4 MiB") {
		t.Fatalf("servers = %+v, want none and a config error naming the 4 MiB limit", list)
	}
	api.do("POST", "/api/mcp/servers", exampleBody(t, "new", nil)).want(t, http.StatusConflict)
	if got := readConfig(t, rt); !bytes.Equal(got, huge) {
		t.Fatal("the oversized file was replaced")
	}
}

// TestOpenModesWarnOnce: a state dir writable by others and a config file
// readable by others give exactly one warning record at start, naming
// both; the next save makes the file 0600. A private state dir gives none.
func TestOpenModesWarnOnce(t *testing.T) {
	const warning = "state files are open to other users"
	private := start(t, Options{}) // no server: its processes would outlive the other runtime's check
	if strings.Contains(private.logs.String(), warning) {
		t.Fatalf("warning on a private state dir:\n%s", private.logs)
	}

	dir := t.TempDir()
	testutil.WriteConfig(t, dir, exampleServer("ex"))
	if err := os.Chmod(filepath.Join(dir, config.FileName), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o700) })
	rt := startIn(t, dir, Options{})
	api := newAPI(t, rt)
	api.do("POST", "/api/mcp/servers", exampleBody(t, "new", map[string]any{"enabled": false})).want(t, http.StatusCreated)
	wantConfigMode0600(t, rt)
	var records []string
	for _, line := range strings.Split(rt.logs.String(), "\n") {
		if strings.Contains(line, warning) {
			records = append(records, line)
		}
	}
	if len(records) != 1 {
		t.Fatalf("%d warning records, want 1:\n%s", len(records), strings.Join(records, "\n"))
	}
	for _, want := range []string{"level=WARN", "state dir " + dir + " is writable by group and others (mode 0777)", "config file " + filepath.Join(dir, config.FileName) + " is readable by group and others (mode 0644)"} {
		if !strings.Contains(records[0], want) {
			t.Errorf("warning %q does not say %q", records[0], want)
		}
	}
}

// TestConfigSymlinkSurvivesSave: a config file that is a symbolic link
// stays one after a save through the API; its target holds the new
// content, owner-only, and no temporary file is left beside it.
func TestConfigSymlinkSurvivesSave(t *testing.T) {
	dir, dotfiles := t.TempDir(), t.TempDir()
	testutil.WriteConfig(t, dotfiles, exampleServer("ex"))
	target := filepath.Join(dotfiles, config.FileName)
	if err := os.Symlink(target, filepath.Join(dir, config.FileName)); err != nil {
		t.Fatal(err)
	}
	rt := startIn(t, dir, Options{})
	api := newAPI(t, rt)
	if names := api.names(); len(names) != 1 || names[0] != "ex" {
		t.Fatalf("servers read through the link = %v", names)
	}
	api.do("POST", "/api/mcp/servers", exampleBody(t, "new", map[string]any{"enabled": false})).want(t, http.StatusCreated)
	if dest, err := os.Readlink(rt.configPath()); err != nil || dest != target {
		t.Fatalf("config file = link to %q, %v; want still a link to %s", dest, err, target)
	}
	if f := wantConfigMode0600(t, rt); len(f.Servers) != 2 {
		t.Fatalf("target after the POST: %+v", f.Servers)
	}
	if ents, _ := os.ReadDir(dotfiles); len(ents) != 1 {
		t.Errorf("dotfiles dir holds %d entries, want only the config", len(ents))
	}
}

// TestSaveOverLimitRefused: a POST that would grow the config file past
// its limit is refused with 413 and the file stays as it was (a file the
// next start would refuse is never written).
func TestSaveOverLimitRefused(t *testing.T) {
	near := exampleServer("near")
	near.Enabled = false
	near.Env = map[string]string{"K": strings.Repeat("a", config.MaxFileSize-(512<<10))}
	rt := start(t, Options{}, near)
	api := newAPI(t, rt)
	before := readConfig(t, rt)
	body := exampleBody(t, "new", map[string]any{"enabled": false, "env": map[string]string{"K": strings.Repeat("b", 900<<10)}})
	e := api.do("POST", "/api/mcp/servers", body).want(t, http.StatusRequestEntityTooLarge).apiError(t)
	if !strings.Contains(e.Error, "4 MiB") {
		t.Errorf("error %q does not name the limit", e.Error)
	}
	if got := readConfig(t, rt); !bytes.Equal(got, before) {
		t.Fatal("the file changed")
	}
	if names := api.names(); len(names) != 1 {
		t.Errorf("servers = %v, want only near", names)
	}
}
