package catalog

import (
	"slices"
	"strings"
	"testing"
)

// want is one expected entry. @HOME@ and @PROJECT@ in file and config stand
// for the fake home and project folders.
type want struct {
	source   Source
	file     string
	name     string
	config   string
	requires []string
	warnings []string
}

// wantHosts is, field by field, what each host's file in testdata maps to.
var wantHosts = []want{
	{SourceClaudeCode, "@HOME@/.claude.json", "api",
		`{"type":"http","url":"https://api.example.com/mcp","headers":{"Authorization":"Bearer ${API_TOKEN}","X-Key":"MARKER-claudecode-header"}}`,
		[]string{"API_TOKEN"},
		[]string{}},
	{SourceClaudeCode, "@HOME@/.claude.json", "events",
		`{"type":"sse","url":"https://events.example.com/sse"}`,
		[]string{},
		[]string{}},
	{SourceClaudeCode, "@HOME@/.claude.json", "local",
		`{"type":"local","command":["${HOME}/bin/server","--port","${PORT:-8080}"],"env":{"DB_PASSWORD":"MARKER-claudecode-env"}}`,
		[]string{"HOME"},
		[]string{}},
	{SourceClaudeCode, "@HOME@/.claude.json#projects//work/app", "local",
		`{"type":"local","command":["node","server.js"]}`,
		[]string{},
		[]string{}},
	{SourceClaudeCode, "@PROJECT@/.mcp.json", "api",
		`{"type":"http","url":"${API_BASE_URL:-https://api.example.com}/mcp"}`,
		[]string{},
		[]string{}},
	{SourceClaudeCode, "@PROJECT@/.mcp.json", "shared",
		`{"type":"local","command":["npx","-y","@example/mcp"],"env":{"TOKEN":"${SHARED_TOKEN}"}}`,
		[]string{"SHARED_TOKEN"},
		[]string{}},
	{SourceClaudeDesktop, "@HOME@/.config/Claude/claude_desktop_config.json", "brave-search",
		`{"type":"local","command":["npx","-y","@modelcontextprotocol/server-brave-search"],"env":{"BRAVE_API_KEY":"MARKER-desktop-env"}}`,
		[]string{},
		[]string{}},
	{SourceClaudeDesktop, "@HOME@/.config/Claude/claude_desktop_config.json", "filesystem",
		`{"type":"local","command":["npx","-y","@modelcontextprotocol/server-filesystem","/home/user/Desktop"]}`,
		[]string{},
		[]string{}},
	{SourceClaudeDesktop, "@HOME@/.config/Claude/claude_desktop_config.json", "literal",
		`{"type":"local","command":["/usr/local/bin/tool","--out","$${HOME}/out","pa$$w0rd"]}`,
		[]string{},
		[]string{}},
	{SourceCodex, "@HOME@/.codex/config.toml", "docs",
		`{"type":"local","command":["npx","-y","mcp-server"],"cwd":"/srv/docs","env":{"API_KEY":"MARKER-codex-env"},"timeout_seconds":46,"connect_timeout_seconds":20,"tools":{"allow":["search"]}}`,
		[]string{},
		[]string{`tool_timeout_sec rounded up to 46 seconds`}},
	{SourceCodex, "@HOME@/.codex/config.toml", "figma",
		`{"type":"http","url":"https://mcp.figma.com/mcp","headers":{"X-Api-Key":"${FIGMA_API_KEY}","X-Figma-Region":"us-east-1","X-Static":"MARKER-codex-header"},"auth":{"kind":"bearer","token":"${FIGMA_OAUTH_TOKEN}"},"enabled":false,"tools":{"deny":["delete"]}}`,
		[]string{"FIGMA_API_KEY", "FIGMA_OAUTH_TOKEN"},
		[]string{`disabled in Codex: imported with enabled false`}},
	{SourceCursor, "@HOME@/.cursor/mcp.json", "local",
		`{"type":"local","command":["npx","-y","mcp-server"],"env":{"API_KEY":"${CURSOR_API_KEY:-}","STATIC":"MARKER-cursor-env"}}`,
		[]string{},
		[]string{`envFile: mcpvisor reads no env file; put the variables in env`}},
	{SourceCursor, "@HOME@/.cursor/mcp.json", "oauth-app",
		`{"type":"http","url":"https://oauth.example.com/mcp","auth":{"kind":"oauth","client_secret":"MARKER-cursor-secret","scopes":["read","write"]}}`,
		[]string{},
		[]string{`auth.CLIENT_ID refers to the environment variable OAUTH_CLIENT_ID; mcpvisor's auth.client_id takes no references: not mapped; give auth.client_id when applying the entry`}},
	{SourceCursor, "@HOME@/.cursor/mcp.json", "remote",
		`{"type":"http","url":"https://mcp.example.com/mcp","headers":{"Authorization":"Bearer MARKER-cursor-header"}}`,
		[]string{},
		[]string{}},
	{SourceCursor, "@PROJECT@/.cursor/mcp.json", "proj",
		`{"type":"local","command":["python","@PROJECT@/server.py","--home","@HOME@","--sep","/"]}`,
		[]string{},
		[]string{}},
	{SourceGemini, "@HOME@/.gemini/settings.json", "events",
		`{"type":"http","url":"http://localhost:8080/sse","headers":{"Authorization":"Bearer ${SSE_TOKEN}"}}`,
		[]string{"SSE_TOKEN"},
		[]string{geminiBareURL}},
	{SourceGemini, "@HOME@/.gemini/settings.json", "http",
		`{"type":"http","url":"https://api.example.com/mcp/","headers":{"X-Key":"MARKER-gemini-header"},"timeout_seconds":5,"tools":{"deny":["dangerous_tool"]}}`,
		[]string{},
		[]string{}},
	{SourceGemini, "@HOME@/.gemini/settings.json", "python",
		`{"type":"local","command":["python","-m","my_mcp_server","--port","8080"],"env":{"API_KEY":"${MY_API_TOKEN}","STATIC":"MARKER-gemini-env"},"timeout_seconds":15,"tools":{"allow":["safe_tool"]}}`,
		[]string{"MY_API_TOKEN"},
		[]string{"env.API_KEY: a bare $NAME became the reference ${NAME}, which fails when the variable is unset (Gemini CLI keeps the text): if it is not a variable, edit the value", `trust: Gemini CLI's confirmation bypass has no mcpvisor counterpart`, `cwd: a relative path in a user file, with no project folder to resolve it against: not mapped`}},
	{SourceGoose, "@HOME@/.config/goose/config.yaml", "developer",
		`{"type":"","timeout_seconds":300}`,
		[]string{},
		[]string{`type "builtin" is a goose extension kind that runs inside goose: not mapped`}},
	{SourceGoose, "@HOME@/.config/goose/config.yaml", "events",
		`{"type":"sse","url":"http://localhost:8000/sse"}`,
		[]string{},
		[]string{}},
	{SourceGoose, "@HOME@/.config/goose/config.yaml", "github",
		`{"type":"local","command":["npx","-y","@modelcontextprotocol/server-github"],"env":{"GITHUB_HOST":"MARKER-goose-env","GITHUB_PERSONAL_ACCESS_TOKEN":"${GITHUB_PERSONAL_ACCESS_TOKEN}","PORT":"8080"},"timeout_seconds":300}`,
		[]string{"GITHUB_PERSONAL_ACCESS_TOKEN"},
		[]string{`env_keys: goose keeps these in its keyring; mcpvisor reads each from the environment variable of the same name`}},
	{SourceGoose, "@HOME@/.config/goose/config.yaml", "remote",
		`{"type":"http","url":"https://mcp.example.com/mcp","headers":{"Authorization":"Bearer MARKER-goose-header"},"enabled":false,"timeout_seconds":60}`,
		[]string{},
		[]string{`disabled in goose: imported with enabled false`}},
	{SourceOpencode, "@HOME@/.config/opencode/opencode.json", "local",
		`{"type":"local","command":["npx","-y","my-mcp-command"],"env":{"MY_ENV_VAR":"MARKER-opencode-env","TOKEN":"${MY_TOKEN:-}"},"connect_timeout_seconds":10}`,
		[]string{},
		[]string{}},
	{SourceOpencode, "@HOME@/.config/opencode/opencode.json", "oauth-app",
		`{"type":"http","url":"https://oauth.example.com/mcp","auth":{"kind":"oauth","client_secret":"${MY_CLIENT_SECRET:-}","scopes":["tools:read","tools:execute"]}}`,
		[]string{},
		[]string{`oauth.clientId refers to the environment variable MY_CLIENT_ID; mcpvisor's auth.client_id takes no references: not mapped; give auth.client_id when applying the entry`}},
	{SourceOpencode, "@HOME@/.config/opencode/opencode.json", "remote",
		`{"type":"http","url":"https://mcp.example.com/mcp","headers":{"Authorization":"Bearer ${MY_API_KEY:-}","X-Static":"MARKER-opencode-header"},"enabled":false}`,
		[]string{},
		[]string{`disabled in opencode: imported with enabled false`}},
	{SourceOpencode, "@PROJECT@/opencode.jsonc", "proj",
		`{"type":"local","command":["bun","x","proj-server","--key","{file:./key.txt}"]}`,
		[]string{},
		[]string{`command[4]: opencode reads part of it from a file ({file:...}), which mcpvisor cannot: kept literal, replace it`}},
	{SourceVSCode, "@HOME@/.config/Code/User/mcp.json", "fetch",
		`{"type":"local","command":["uvx","mcp-server-fetch"],"env":{"SECRET":"MARKER-vscode-env"}}`,
		[]string{},
		[]string{`envFile: mcpvisor reads no env file; put the variables in env`}},
	{SourceVSCode, "@HOME@/.config/Code/User/mcp.json", "github",
		`{"type":"http","url":"https://api.githubcopilot.com/mcp/","headers":{"Authorization":"Bearer ${GITHUB_TOKEN}"}}`,
		[]string{"GITHUB_TOKEN"},
		[]string{`headers.Authorization: VS Code prompts for input "github-token"; mcpvisor reads it from the environment variable GITHUB_TOKEN instead`}},
	{SourceVSCode, "@HOME@/.config/Code/User/mcp.json", "legacy",
		`{"type":"sse","url":"http://localhost:3001/sse","headers":{"X-Api-Key":"MARKER-vscode-header"}}`,
		[]string{},
		[]string{}},
	{SourceVSCode, "@HOME@/.config/Code/User/settings.json", "memory",
		`{"type":"local","command":["npx","-y","@modelcontextprotocol/server-memory"]}`,
		[]string{},
		[]string{}},
	{SourceVSCode, "@PROJECT@/.vscode/mcp.json", "github",
		`{"type":"local","command":["docker","run","-i","--rm","-e","GITHUB_PERSONAL_ACCESS_TOKEN","ghcr.io/github/github-mcp-server"],"cwd":"@PROJECT@","env":{"GITHUB_PERSONAL_ACCESS_TOKEN":"${GITHUB_TOKEN}"}}`,
		[]string{"GITHUB_TOKEN"},
		[]string{`env.GITHUB_PERSONAL_ACCESS_TOKEN: VS Code prompts for input "github_token"; mcpvisor reads it from the environment variable GITHUB_TOKEN instead`, `dev: VS Code's watch and debug settings have no mcpvisor counterpart`}},
	{SourceVSCode, "@PROJECT@/.vscode/settings.json", "time",
		`{"type":"local","command":["uvx","mcp-server-time","--local-timezone","Europe/Paris"]}`,
		[]string{},
		[]string{}},
	{SourceWindsurf, "@HOME@/.codeium/windsurf/mcp_config.json", "figma",
		`{"type":"http","url":"https://figma.example.com/sse","headers":{"X-Figma-Token":"$${file:/home/user/.figma-token}"}}`,
		[]string{},
		[]string{`headers.X-Figma-Token: Windsurf reads part of it from a file (${file:...}), which mcpvisor cannot: kept literal, replace it`}},
	{SourceWindsurf, "@HOME@/.codeium/windsurf/mcp_config.json", "github",
		`{"type":"local","command":["npx","-y","@modelcontextprotocol/server-github"],"env":{"GITHUB_PERSONAL_ACCESS_TOKEN":"MARKER-windsurf-env"},"enabled":false,"tools":{"deny":["delete_repository"]}}`,
		[]string{},
		[]string{`disabled in Windsurf: imported with enabled false`}},
	{SourceWindsurf, "@HOME@/.codeium/windsurf/mcp_config.json", "remote",
		`{"type":"http","url":"https://remote.example.com/mcp","headers":{"Authorization":"Bearer ${REMOTE_TOKEN:-}"}}`,
		[]string{},
		[]string{}},
	{SourceZed, "@HOME@/.config/zed/settings.json", "ext",
		`{"type":""}`,
		[]string{},
		[]string{`provided by a Zed extension, which mcpvisor cannot run: not mapped`}},
	{SourceZed, "@HOME@/.config/zed/settings.json", "local",
		`{"type":"local","command":["npx","-y","mcp-server"],"env":{"KEY":"MARKER-zed-env"}}`,
		[]string{},
		[]string{}},
	{SourceZed, "@HOME@/.config/zed/settings.json", "old",
		`{"type":"local","command":["/usr/local/bin/server","--stdio"],"env":{"OLD":"MARKER-zed-old"}}`,
		[]string{},
		[]string{}},
	{SourceZed, "@HOME@/.config/zed/settings.json", "remote",
		`{"type":"http","url":"https://mcp.example.com/mcp","headers":{"Authorization":"Bearer MARKER-zed-header"}}`,
		[]string{},
		[]string{}},
}

func TestListMapsEveryHost(t *testing.T) {
	home, project := fakeMachine(t)
	entries, warnings := List(Options{Home: home, Projects: []string{project}, GOOS: "linux"})
	if len(warnings) != 0 {
		t.Fatalf("warnings: %v", warnings)
	}
	got := hostEntries(entries)
	expand := strings.NewReplacer("@HOME@", home, "@PROJECT@", project).Replace
	if len(got) != len(wantHosts) {
		t.Errorf("%d host entries, want %d", len(got), len(wantHosts))
	}
	for i := range min(len(got), len(wantHosts)) {
		g, w := got[i], wantHosts[i]
		id := string(w.source) + " " + w.file + " " + w.name
		if g.Source != w.source || g.File != expand(w.file) || g.Name != w.name {
			t.Errorf("entry %d is %s %s %s, want %s", i, g.Source, g.File, g.Name, id)
			continue
		}
		if c, wc := normalJSON(t, string(g.Config)), normalJSON(t, expand(w.config)); c != wc {
			t.Errorf("%s: config\n got %s\nwant %s", id, c, wc)
		}
		if !slices.Equal(g.Requires, w.requires) {
			t.Errorf("%s: requires %q, want %q", id, g.Requires, w.requires)
		}
		if !slices.Equal(g.Warnings, w.warnings) {
			t.Errorf("%s: warnings\n got %q\nwant %q", id, g.Warnings, w.warnings)
		}
	}
}

// What cannot be mapped is a warning on the entry, naming the field; a
// server that is not an object is a warning for the file.
func TestUnmappableFieldsAreWarnings(t *testing.T) {
	home := t.TempDir()
	path := writeFile(t, home, ".cursor/mcp.json", `{"mcpServers": {
		"odd": {"command": "x", "type": "websocket", "alwaysAllow": ["MARKER-field-value"], "timeout": 5},
		"bad name!": {"url": "https://e.example/mcp", "headers": {"authorization": "MARKER-a", "Authorization": "MARKER-b"}},
		"none": {},
		"scalar": "MARKER-scalar"
	}}`)
	entries, warnings := List(Options{Home: home, GOOS: "linux", Sources: []Source{SourceCursor}})
	if len(warnings) != 1 || warnings[0].File != path || !strings.Contains(warnings[0].Message, `"scalar" is not an object`) {
		t.Errorf("warnings %v", warnings)
	}
	got := map[string][]string{}
	for _, e := range entries {
		got[e.Name] = e.Warnings
	}
	want := map[string][]string{
		"odd": {`type "websocket" is a transport mcpvisor does not have`, `not mapped: "alwaysAllow", "timeout"`},
		"bad name!": {`headers: "Authorization" and "authorization" are one header; kept "authorization"`,
			`the name "bad name!" is not a valid mcpvisor server name (letters, digits, '_' or '-', at most 48): apply it under another name`},
		"none": {"neither a command nor a url: nothing to start"},
	}
	if len(got) != len(want) {
		t.Errorf("entries %v", got)
	}
	for name, w := range want {
		if !slices.Equal(got[name], w) {
			t.Errorf("%s: warnings\n got %q\nwant %q", name, got[name], w)
		}
	}
	if text := warningText(entries, warnings); strings.Contains(text, "MARKER") {
		t.Errorf("a warning holds a value: %s", text)
	}
}
