package catalog

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// A host field that is read but not carried over is a warning, never a
// silent drop: a command on a remote server, a url on a local one, the
// second of two url keys, what the type has no use for (env and cwd of a
// remote server, headers and auth of a local one), Zed's settings on a
// server of no extension. A host's allow list of tools that maps to no
// name is no tool, not every tool; a tool name is matched literally.
func TestReadFieldsAreMappedOrWarned(t *testing.T) {
	home := t.TempDir()
	writeFile(t, home, ".claude.json", `{"mcpServers": {
		"remote-cmd": {"type": "http", "url": "https://r.example/mcp", "command": "x", "env": {"K": "MARKER-drop-env"}},
		"local-url": {"command": "x", "url": "https://l.example/mcp", "headers": {"H": "MARKER-drop-header"}}
	}}`)
	writeFile(t, home, ".codex/config.toml", `[mcp_servers.remote-cwd]
url = "https://c.example/mcp"
cwd = "/srv"
[mcp_servers.none-allowed]
command = "x"
enabled_tools = []
disabled_tools = ["rm*"]
`)
	writeFile(t, home, ".cursor/mcp.json", `{"mcpServers": {
		"local-auth": {"command": "x", "auth": {"CLIENT_ID": "id", "CLIENT_SECRET": "MARKER-drop-secret"}}
	}}`)
	writeFile(t, home, ".gemini/settings.json", `{"mcpServers": {
		"two-urls": {"httpUrl": "https://h.example/mcp", "url": "https://s.example/sse"},
		"refs-only": {"command": "x", "includeTools": ["$TOOL"]}
	}}`)
	writeFile(t, home, ".codeium/windsurf/mcp_config.json", `{"mcpServers": {
		"both": {"serverUrl": "https://w.example/mcp", "url": "https://w2.example/mcp", "disabledTools": ["del*", "a\\b"]}
	}}`)
	writeFile(t, home, ".config/opencode/opencode.json", `{"mcp": {
		"oc-remote": {"type": "remote", "url": "https://o.example/mcp", "command": ["x"], "environment": {"E": "v"}},
		"oc-local": {"type": "local", "command": ["x"], "url": "https://o.example/mcp", "headers": {"H": "v"}}
	}}`)
	writeFile(t, home, ".config/zed/settings.json", `{"context_servers": {
		"zs": {"command": "x", "settings": {"k": "v"}},
		"zempty": {"command": {"path": "x"}, "settings": {}}
	}}`)
	entries, warnings := List(Options{Home: home, GOOS: "linux"})
	if len(warnings) != 0 {
		t.Fatalf("warnings %v", warnings)
	}
	want := map[string][]string{
		"remote-cmd":   {"command: a http server runs no command: not mapped", "env: a remote server has no process to pass it to: not mapped"},
		"local-url":    {"url: a local server has no url: not mapped", "headers: a local server sends no headers: not mapped"},
		"remote-cwd":   {"cwd: a remote server has no process to run in it: not mapped"},
		"none-allowed": {`enabled_tools names no tool mcpvisor can list: mapped as tools.deny ["*"] (no tool); edit tools.allow to offer some`},
		"local-auth":   {"auth: a local server signs in to nothing: not mapped"},
		"two-urls":     {`url: Gemini CLI takes "httpUrl" first: not mapped`},
		"refs-only": {"includeTools[0] refers to the environment variable TOOL; mcpvisor's tools.allow takes no references: not mapped; give tools.allow when applying the entry",
			`includeTools names no tool mcpvisor can list: mapped as tools.deny ["*"] (no tool); edit tools.allow to offer some`},
		"both":      {`url: Windsurf takes "serverUrl" first: not mapped`},
		"oc-remote": {"command: a remote server runs no command: not mapped", "env: a remote server has no process to pass it to: not mapped"},
		"oc-local":  {"url: a local server has no url: not mapped", "headers: a local server sends no headers: not mapped"},
		"zs":        {"settings: Zed hands them to an extension's server; this one is not an extension's: not mapped"},
		"zempty":    nil,
	}
	seen := 0
	for _, e := range hostEntries(entries) {
		w, ok := want[e.Name]
		if !ok {
			continue
		}
		seen++
		if !slices.Equal(e.Warnings, w) {
			t.Errorf("%s: warnings\n got %q\nwant %q", e.Name, e.Warnings, w)
		}
		var c serverConfig
		if err := json.Unmarshal(e.Config, &c); err != nil {
			t.Fatal(err)
		}
		if c.Type == "local" && (c.URL != "" || c.Headers != nil || c.Auth != nil) || c.Type != "local" && (c.Command != nil || c.Env != nil || c.Cwd != "") {
			t.Errorf("%s: off-type fields kept: %s", e.Name, e.Config)
		}
		if e.Name == "none-allowed" && (c.Tools == nil || !slices.Equal(c.Tools.Deny, []string{"*"}) || c.Tools.Allow != nil) {
			t.Errorf("none-allowed: tools %+v", c.Tools)
		}
		if e.Name == "both" && (c.Tools == nil || !slices.Equal(c.Tools.Deny, []string{`del\*`, `a\\b`})) {
			t.Errorf("both: tools %+v, want the names quoted", c.Tools)
		}
	}
	if seen != len(want) {
		t.Errorf("%d of %d entries listed", seen, len(want))
	}
	if text := warningText(entries, warnings); strings.Contains(text, "MARKER") {
		t.Errorf("a warning holds a value: %s", text)
	}
}
