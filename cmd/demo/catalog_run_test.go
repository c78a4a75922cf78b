package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/internal/testutil"
)

// writeJSONFile writes v as JSON at rel under dir, making the folders.
func writeJSONFile(t *testing.T, dir, rel string, v any) {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// `demo run -home DIR -project DIR` end to end, both folders given
// relative to demo run's working directory as a user types them: GET
// /api/mcp/catalog lists the project's entries of every host with
// absolute file paths (and ${workspaceFolder} and a project cwd resolved
// to the absolute folder), a project entry applied comes up ready, and
// SIGTERM stops demo run with no process left.
func TestRunCatalogProjects(t *testing.T) {
	root := t.TempDir()
	home, project, state := filepath.Join(root, "home"), filepath.Join(root, "proj"), filepath.Join(root, "state")
	example := map[string]any{"command": demoBin, "args": []string{"serve"}, "env": map[string]string{testutil.MarkerEnv: marker}}
	writeJSONFile(t, home, ".claude.json", map[string]any{
		"mcpServers": map[string]any{"user": map[string]any{"command": "node", "args": []string{"user.js"}}},
		"projects":   map[string]any{project: map[string]any{"mcpServers": map[string]any{"local": map[string]any{"command": "node", "args": []string{"local.js"}}}}},
	})
	writeJSONFile(t, project, ".mcp.json", map[string]any{"mcpServers": map[string]any{"shared": example}})
	writeJSONFile(t, project, ".cursor/mcp.json", map[string]any{"mcpServers": map[string]any{
		"proj": map[string]any{"command": "python", "args": []string{"${workspaceFolder}/server.py"}}}})
	writeJSONFile(t, project, ".vscode/mcp.json", map[string]any{"servers": map[string]any{
		"gh": map[string]any{"type": "stdio", "command": "docker", "args": []string{"run"}, "cwd": "${workspaceFolder}"}}})
	writeJSONFile(t, project, "opencode.jsonc", map[string]any{"mcp": map[string]any{
		"oc": map[string]any{"type": "local", "command": []string{"bun", "x", "oc"}}}})
	testutil.WriteConfig(t, state, config.Server{Name: "ex", Type: config.TypeLocal, Enabled: true,
		Command: []string{demoBin, "serve"}, Env: map[string]string{testutil.MarkerEnv: marker}})

	cmd := demoCommand("run", "-state-dir", "state", "-listen", "127.0.0.1:0", "-home", "home", "-project", "proj")
	cmd.Dir = root
	base, logs := startCmd(t, cmd)
	awaitState(t, base, "ex", "ready", 30*time.Second)

	var list struct {
		Entries []struct {
			Source, File, Name string
			Config             *struct {
				Command []string
				Cwd     string
			}
			Warnings []string
		}
		Warnings []struct{ Source, File, Message string }
	}
	getJSON(t, base+"/api/mcp/catalog", &list)
	type key struct{ source, file, name string }
	got := map[key][]string{} // the entry's command, cwd last
	for _, e := range list.Entries {
		if e.Source == "builtin" {
			continue
		}
		if !filepath.IsAbs(e.File) {
			t.Errorf("%s %s: file %q is not absolute", e.Source, e.Name, e.File)
		}
		if e.Config == nil {
			t.Errorf("%s %s %s: no config; warnings %q", e.Source, e.File, e.Name, e.Warnings)
			continue
		}
		got[key{e.Source, e.File, e.Name}] = append(slices.Clone(e.Config.Command), e.Config.Cwd)
	}
	want := map[key][]string{
		{"claude-code", filepath.Join(home, ".claude.json"), "user"}:                           {"node", "user.js", ""},
		{"claude-code", filepath.Join(home, ".claude.json") + "#projects/" + project, "local"}: {"node", "local.js", ""},
		{"claude-code", filepath.Join(project, ".mcp.json"), "shared"}:                         {demoBin, "serve", ""},
		{"cursor", filepath.Join(project, ".cursor", "mcp.json"), "proj"}:                      {"python", project + "/server.py", ""},
		{"vscode", filepath.Join(project, ".vscode", "mcp.json"), "gh"}:                        {"docker", "run", project},
		{"opencode", filepath.Join(project, "opencode.jsonc"), "oc"}:                           {"bun", "x", "oc", ""},
	}
	for k, w := range want {
		if g, ok := got[k]; !ok || !slices.Equal(g, w) {
			t.Errorf("catalog entry %v: command and cwd %q (listed: %v), want %q", k, g, ok, w)
		}
	}
	if len(got) != len(want) || len(list.Warnings) != 0 {
		t.Errorf("%d host entries, want %d; warnings %+v", len(got), len(want), list.Warnings)
	}

	// The project's entry applies by its absolute file and connects.
	body := `{"entries": [{"source": "claude-code", "file": ` + strconv.Quote(filepath.Join(project, ".mcp.json")) + `, "name": "shared"}]}`
	resp, err := http.Post(base+"/api/mcp/catalog/apply", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(answer), `"status":"added"`) {
		t.Fatalf("apply: %d %s", resp.StatusCode, answer)
	}
	awaitState(t, base, "shared", "ready", 30*time.Second)

	_ = cmd.Process.Signal(syscall.SIGTERM)
	if err := waitBounded(cmd, 30*time.Second); err != nil {
		t.Fatalf("demo run after SIGTERM: %v (want exit 0)\n%s", err, logs.String())
	}
	if left := testutil.ProcessesWithMarker(marker); len(left) > 0 {
		t.Errorf("processes left after demo run stopped: %v", left)
	}
}
