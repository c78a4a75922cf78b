package runtime

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/openprogram/mcpvisor/catalog"
	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/status"
)

// The acceptance test of issue 14 ("Done when"), through the management
// API on a real loopback listener. Linux only: the fake home lays the
// per-OS folders out as on Linux (~/.config/Claude, ~/.config/Code), and
// the server's environment is read from /proc.

// acceptToken is the value of GITHUB_TOKEN in the runtime's environment
// (Options.LookupEnv): the server must get it, and nothing may show it.
const acceptToken = "ACCEPT-GITHUB-TOKEN-planted-5d0c9e71"

// hostMarkers is the prefix of every secret planted in catalog/testdata
// and in this test's additions; the masked form never shows a prefix.
const hostMarkers = "MARKER-"

// acceptanceMachine copies the host files of catalog/testdata (each
// written from its host's documentation) into a fake home and project,
// and adds example servers: a ~/.claude.json entry for the project whose
// env holds ${GITHUB_TOKEN}, and two Codex servers "tick" and "tock".
func acceptanceMachine(t *testing.T) (home, project string) {
	t.Helper()
	root := t.TempDir()
	home, project = filepath.Join(root, "home"), filepath.Join(root, "project")
	for dst, src := range map[string]string{home: "../catalog/testdata/home", project: "../catalog/testdata/project"} {
		if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
			t.Fatal(err)
		}
	}
	claude := filepath.Join(home, ".claude.json")
	var doc map[string]any
	if err := json.Unmarshal(mustRead(t, claude), &doc); err != nil {
		t.Fatal(err)
	}
	doc["projects"].(map[string]any)[project] = map[string]any{"mcpServers": map[string]any{
		"withref": map[string]any{"command": demoBin, "args": []string{"serve"},
			"env": map[string]string{testutil.MarkerEnv: marker, "TOKEN": "${GITHUB_TOKEN}"}},
	}}
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(claude, data, 0o600); err != nil {
		t.Fatal(err)
	}
	codex := filepath.Join(home, ".codex", "config.toml")
	f, err := os.OpenFile(codex, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []struct{ name, greeting string }{{"tick", "MARKER-accept-new-greeting"}, {"tock", "hello"}} {
		fmt.Fprintf(f, "\n[mcp_servers.%s]\ncommand = %s\nargs = [\"serve\"]\nenv = { %q = %q, \"GREETING\" = %q }\n",
			s.name, strconv.Quote(demoBin), testutil.MarkerEnv, marker, s.greeting)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return home, project
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// acceptanceConfig is the runtime's own config: against the Codex source,
// "docs" is another server of that name (a conflict), "figma" is Codex's
// figma field for field (the same; disabled, so it never connects),
// "tick" differs in one env value (a change), and "tock" is absent (an
// add).
func acceptanceConfig(t *testing.T) string {
	t.Helper()
	example := func(env map[string]string) map[string]any {
		env[testutil.MarkerEnv] = marker
		return map[string]any{"type": "local", "command": []string{demoBin, "serve"}, "env": env}
	}
	doc := map[string]any{"servers": map[string]any{
		"docs": example(map[string]string{}),
		"tick": example(map[string]string{"GREETING": "MARKER-accept-old-greeting"}),
		"figma": map[string]any{"type": "http", "url": "https://mcp.figma.com/mcp",
			"headers": map[string]string{"X-Api-Key": "${FIGMA_API_KEY}", "X-Figma-Region": "us-east-1", "X-Static": "MARKER-codex-header"},
			"auth":    map[string]string{"kind": "bearer", "token": "${FIGMA_OAUTH_TOKEN}"},
			"enabled": false, "tools": map[string][]string{"deny": {"delete"}}},
	}}
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, config.FileName), data, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// wireClient sends requests to the API over a real connection and keeps
// every answer's body for the secret checks.
type wireClient struct {
	t       *testing.T
	ts      *httptest.Server
	answers []string
}

// do sends body (JSON) and fails the test unless the answer has code and
// is JSON.
func (c *wireClient) do(method, path, body string, code int) []byte {
	c.t.Helper()
	req, err := http.NewRequest(method, c.ts.URL+path, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.ts.Client().Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatalf("%s %s: reading: %v", method, path, err)
	}
	c.answers = append(c.answers, string(got))
	if resp.StatusCode != code || resp.Header.Get("Content-Type") != "application/json" || !json.Valid(got) {
		c.t.Fatalf("%s %s: %d %s %s, want %d JSON", method, path, resp.StatusCode, resp.Header.Get("Content-Type"), got, code)
	}
	return got
}

func (c *wireClient) get(path string, v any) {
	c.t.Helper()
	if err := json.Unmarshal(c.do(http.MethodGet, path, "", http.StatusOK), v); err != nil {
		c.t.Fatalf("GET %s: %v", path, err)
	}
}

// acceptanceHosts is every server of every host in the fake machine, as
// "source file name" with @HOME@ and @PROJECT@ for the folders.
var acceptanceHosts = []string{
	"claude-code @HOME@/.claude.json api",
	"claude-code @HOME@/.claude.json events",
	"claude-code @HOME@/.claude.json local",
	"claude-code @HOME@/.claude.json#projects/@PROJECT@ withref",
	"claude-code @HOME@/.claude.json#projects//work/app local",
	"claude-code @PROJECT@/.mcp.json api",
	"claude-code @PROJECT@/.mcp.json shared",
	"claude-desktop @HOME@/.config/Claude/claude_desktop_config.json brave-search",
	"claude-desktop @HOME@/.config/Claude/claude_desktop_config.json filesystem",
	"claude-desktop @HOME@/.config/Claude/claude_desktop_config.json literal",
	"codex @HOME@/.codex/config.toml docs",
	"codex @HOME@/.codex/config.toml figma",
	"codex @HOME@/.codex/config.toml tick",
	"codex @HOME@/.codex/config.toml tock",
	"cursor @HOME@/.cursor/mcp.json local",
	"cursor @HOME@/.cursor/mcp.json oauth-app",
	"cursor @HOME@/.cursor/mcp.json remote",
	"cursor @PROJECT@/.cursor/mcp.json proj",
	"gemini @HOME@/.gemini/settings.json events",
	"gemini @HOME@/.gemini/settings.json http",
	"gemini @HOME@/.gemini/settings.json python",
	"goose @HOME@/.config/goose/config.yaml developer",
	"goose @HOME@/.config/goose/config.yaml events",
	"goose @HOME@/.config/goose/config.yaml github",
	"goose @HOME@/.config/goose/config.yaml remote",
	"opencode @HOME@/.config/opencode/opencode.json local",
	"opencode @HOME@/.config/opencode/opencode.json oauth-app",
	"opencode @HOME@/.config/opencode/opencode.json remote",
	"opencode @PROJECT@/opencode.jsonc proj",
	"vscode @HOME@/.config/Code/User/mcp.json fetch",
	"vscode @HOME@/.config/Code/User/mcp.json github",
	"vscode @HOME@/.config/Code/User/mcp.json legacy",
	"vscode @HOME@/.config/Code/User/settings.json memory",
	"vscode @PROJECT@/.vscode/mcp.json github",
	"vscode @PROJECT@/.vscode/settings.json time",
	"windsurf @HOME@/.codeium/windsurf/mcp_config.json figma",
	"windsurf @HOME@/.codeium/windsurf/mcp_config.json github",
	"windsurf @HOME@/.codeium/windsurf/mcp_config.json remote",
	"zed @HOME@/.config/zed/settings.json ext",
	"zed @HOME@/.config/zed/settings.json local",
	"zed @HOME@/.config/zed/settings.json old",
	"zed @HOME@/.config/zed/settings.json remote",
}

// hostCheck is one spot check of a catalog entry's mapped config.
type hostCheck struct {
	key, what string
	ok        func(v *config.ServerView, e CatalogEntry) bool
}

// acceptanceChecks spot-check, for every host, fields of its entries as
// the API shows them: reference-only secrets as their reference, other
// secrets masked.
func acceptanceChecks(home, project string) []hostCheck {
	masked := func(s config.SecretView, secret string) bool {
		return s.HasValue && s.Reference == "" && s.Masked == config.Mask(secret)
	}
	warns := func(e CatalogEntry, part string) bool {
		return slices.ContainsFunc(e.Warnings, func(w string) bool { return strings.Contains(w, part) })
	}
	return []hostCheck{
		{"claude-desktop @HOME@/.config/Claude/claude_desktop_config.json brave-search", "local npx, env masked", func(v *config.ServerView, _ CatalogEntry) bool {
			return v.Type == config.TypeLocal && slices.Equal(v.Command, []string{"npx", "-y", "@modelcontextprotocol/server-brave-search"}) && masked(v.Env["BRAVE_API_KEY"], "MARKER-desktop-env")
		}},
		{"claude-desktop @HOME@/.config/Claude/claude_desktop_config.json literal", "a ${ in args kept literal", func(v *config.ServerView, _ CatalogEntry) bool {
			return slices.Equal(v.Command, []string{"/usr/local/bin/tool", "--out", "$${HOME}/out", "pa$$w0rd"})
		}},
		{"claude-code @HOME@/.claude.json api", "http, header reference and mask, requires", func(v *config.ServerView, e CatalogEntry) bool {
			return v.Type == config.TypeHTTP && v.URL == "https://api.example.com/mcp" && v.Headers["Authorization"].Reference == "Bearer ${API_TOKEN}" &&
				masked(v.Headers["X-Key"], "MARKER-claudecode-header") && slices.Equal(e.Requires, []string{"API_TOKEN"})
		}},
		{"claude-code @HOME@/.claude.json events", "sse", func(v *config.ServerView, _ CatalogEntry) bool {
			return v.Type == config.TypeSSE && v.URL == "https://events.example.com/sse"
		}},
		{"claude-code @HOME@/.claude.json#projects/@PROJECT@ withref", "the example server, env reference", func(v *config.ServerView, e CatalogEntry) bool {
			return slices.Equal(v.Command, []string{demoBin, "serve"}) && v.Env["TOKEN"] == (config.SecretView{HasValue: true, Reference: "${GITHUB_TOKEN}"}) &&
				slices.Equal(e.Requires, []string{"GITHUB_TOKEN"})
		}},
		{"claude-code @PROJECT@/.mcp.json shared", "project env reference", func(v *config.ServerView, _ CatalogEntry) bool {
			return v.Env["TOKEN"].Reference == "${SHARED_TOKEN}"
		}},
		{"cursor @HOME@/.cursor/mcp.json oauth-app", "oauth, client secret masked", func(v *config.ServerView, _ CatalogEntry) bool {
			return v.Auth.Kind == "oauth" && v.Auth.HasClientSecret && v.Auth.ClientSecretMasked == config.Mask("MARKER-cursor-secret") && slices.Equal(v.Auth.Scopes, []string{"read", "write"})
		}},
		{"cursor @HOME@/.cursor/mcp.json local", "envFile warned", func(v *config.ServerView, e CatalogEntry) bool {
			return masked(v.Env["STATIC"], "MARKER-cursor-env") && warns(e, "envFile")
		}},
		{"cursor @PROJECT@/.cursor/mcp.json proj", "${workspaceFolder} and ${userHome} resolved", func(v *config.ServerView, _ CatalogEntry) bool {
			return slices.Equal(v.Command, []string{"python", project + "/server.py", "--home", home, "--sep", "/"})
		}},
		{"vscode @HOME@/.config/Code/User/mcp.json github", "${input:} became a reference, warned", func(v *config.ServerView, e CatalogEntry) bool {
			return v.Type == config.TypeHTTP && v.Headers["Authorization"].Reference == "Bearer ${GITHUB_TOKEN}" && warns(e, `prompts for input "github-token"`)
		}},
		{"vscode @HOME@/.config/Code/User/mcp.json legacy", "sse, header masked", func(v *config.ServerView, _ CatalogEntry) bool {
			return v.Type == config.TypeSSE && masked(v.Headers["X-Api-Key"], "MARKER-vscode-header")
		}},
		{"vscode @HOME@/.config/Code/User/settings.json memory", "settings.json mcp", func(v *config.ServerView, _ CatalogEntry) bool {
			return slices.Equal(v.Command, []string{"npx", "-y", "@modelcontextprotocol/server-memory"})
		}},
		{"vscode @PROJECT@/.vscode/mcp.json github", "cwd the workspace", func(v *config.ServerView, _ CatalogEntry) bool {
			return v.Type == config.TypeLocal && v.Cwd == project && v.Command[0] == "docker"
		}},
		{"vscode @PROJECT@/.vscode/settings.json time", "flat mcp.servers", func(v *config.ServerView, _ CatalogEntry) bool {
			return slices.Equal(v.Command, []string{"uvx", "mcp-server-time", "--local-timezone", "Europe/Paris"})
		}},
		{"windsurf @HOME@/.codeium/windsurf/mcp_config.json github", "disabled, deny list", func(v *config.ServerView, _ CatalogEntry) bool {
			return !v.Enabled && slices.Equal(v.Tools.Deny, []string{"delete_repository"}) && masked(v.Env["GITHUB_PERSONAL_ACCESS_TOKEN"], "MARKER-windsurf-env")
		}},
		{"windsurf @HOME@/.codeium/windsurf/mcp_config.json remote", "serverUrl, ${env:} reference", func(v *config.ServerView, _ CatalogEntry) bool {
			return v.Type == config.TypeHTTP && v.URL == "https://remote.example.com/mcp" && strings.HasPrefix(v.Headers["Authorization"].Reference, "Bearer ${REMOTE_TOKEN")
		}},
		{"opencode @HOME@/.config/opencode/opencode.json local", "{env:} reference, timeout", func(v *config.ServerView, _ CatalogEntry) bool {
			return slices.Equal(v.Command, []string{"npx", "-y", "my-mcp-command"}) && v.Env["TOKEN"].Reference == "${MY_TOKEN:-}" && v.ConnectTimeoutSeconds == 10
		}},
		{"opencode @HOME@/.config/opencode/opencode.json remote", "remote disabled", func(v *config.ServerView, _ CatalogEntry) bool {
			return v.Type == config.TypeHTTP && !v.Enabled && v.Headers["Authorization"].Reference == "Bearer ${MY_API_KEY:-}"
		}},
		{"opencode @PROJECT@/opencode.jsonc proj", "jsonc, {file:} warned", func(v *config.ServerView, e CatalogEntry) bool {
			return v.Command[0] == "bun" && warns(e, "{file:...}")
		}},
		{"goose @HOME@/.config/goose/config.yaml github", "env_keys as references, timeout", func(v *config.ServerView, _ CatalogEntry) bool {
			return v.Env["GITHUB_PERSONAL_ACCESS_TOKEN"].Reference == "${GITHUB_PERSONAL_ACCESS_TOKEN}" && masked(v.Env["GITHUB_HOST"], "MARKER-goose-env") && v.TimeoutSeconds == 300
		}},
		{"goose @HOME@/.config/goose/config.yaml events", "sse uri", func(v *config.ServerView, _ CatalogEntry) bool {
			return v.Type == config.TypeSSE && v.URL == "http://localhost:8000/sse"
		}},
		{"zed @HOME@/.config/zed/settings.json old", "the old command object", func(v *config.ServerView, _ CatalogEntry) bool {
			return slices.Equal(v.Command, []string{"/usr/local/bin/server", "--stdio"}) && masked(v.Env["OLD"], "MARKER-zed-old")
		}},
		{"zed @HOME@/.config/zed/settings.json remote", "remote header masked", func(v *config.ServerView, _ CatalogEntry) bool {
			return v.Type == config.TypeHTTP && masked(v.Headers["Authorization"], "Bearer MARKER-zed-header")
		}},
		{"codex @HOME@/.codex/config.toml docs", "cwd, timeouts, allow list", func(v *config.ServerView, _ CatalogEntry) bool {
			return v.Cwd == "/srv/docs" && v.TimeoutSeconds == 46 && v.ConnectTimeoutSeconds == 20 && slices.Equal(v.Tools.Allow, []string{"search"})
		}},
		{"codex @HOME@/.codex/config.toml figma", "bearer token reference, disabled", func(v *config.ServerView, _ CatalogEntry) bool {
			return v.Auth.Kind == "bearer" && v.Auth.TokenReference == "${FIGMA_OAUTH_TOKEN}" && v.Headers["X-Api-Key"].Reference == "${FIGMA_API_KEY}" && !v.Enabled
		}},
		{"gemini @HOME@/.gemini/settings.json python", "$VAR reference, allow list, timeout", func(v *config.ServerView, _ CatalogEntry) bool {
			return v.Env["API_KEY"].Reference == "${MY_API_TOKEN}" && slices.Equal(v.Tools.Allow, []string{"safe_tool"}) && v.TimeoutSeconds == 15
		}},
		{"gemini @HOME@/.gemini/settings.json http", "httpUrl", func(v *config.ServerView, _ CatalogEntry) bool {
			return v.Type == config.TypeHTTP && v.URL == "https://api.example.com/mcp/" && v.TimeoutSeconds == 5
		}},
	}
}

// Issue 14, "Done when": with a fake home holding every host's file, the
// catalog lists every server of every host with its fields mapped, the
// diff against our config is right, applying two entries brings them up
// as ready servers with tools, and ${GITHUB_TOKEN} stays a reference in
// the file and in every answer while the server gets the value.
func TestCatalogAcceptance(t *testing.T) {
	home, project := acceptanceMachine(t)
	lookup := func(k string) (string, bool) {
		if k == "GITHUB_TOKEN" {
			return acceptToken, true
		}
		return "", false
	}
	rt := startIn(t, acceptanceConfig(t), Options{Home: home, Projects: []string{project}, LookupEnv: lookup})
	all := rt.Subscribe(events.SubscribeOptions{From: 1, Buffer: 1 << 14})
	t.Cleanup(all.Close)
	ts := httptest.NewServer(rt.Handler())
	t.Cleanup(ts.Close)
	if !strings.HasPrefix(ts.URL, "http://127.0.0.1:") {
		t.Fatalf("the test server is at %s, want 127.0.0.1", ts.URL)
	}
	api := &wireClient{t: t, ts: ts}
	expand := strings.NewReplacer("@HOME@", home, "@PROJECT@", project).Replace

	// The catalog: every server of every host, and the templates.
	var list CatalogList
	api.get("/api/mcp/catalog", &list)
	byKey := map[string]CatalogEntry{}
	var hosts []string
	templates := 0
	for _, e := range list.Entries {
		if e.Source == catalog.SourceBuiltin {
			templates++
			continue
		}
		key := string(e.Source) + " " + e.File + " " + e.Name
		hosts = append(hosts, key)
		byKey[key] = e
	}
	want := make([]string, 0, len(acceptanceHosts))
	for _, k := range acceptanceHosts {
		want = append(want, expand(k))
	}
	sort.Strings(want)
	sort.Strings(hosts)
	if !slices.Equal(hosts, want) {
		t.Errorf("the catalog's host entries:\n got %q\nwant %q", hosts, want)
	}
	if templates == 0 {
		t.Error("the catalog has no built-in templates")
	}
	if len(list.Warnings) != 0 {
		t.Errorf("source warnings: %+v", list.Warnings)
	}
	for _, c := range acceptanceChecks(home, project) {
		e, ok := byKey[expand(c.key)]
		if !ok || e.Config == nil {
			t.Errorf("%s: no entry or no config: %+v", c.key, e)
			continue
		}
		if !c.ok(e.Config, e) {
			t.Errorf("%s: not mapped as expected (%s): %+v, warnings %q", c.key, c.what, *e.Config, e.Warnings)
		}
	}

	// The diff of one source against the runtime's config.
	wantDiff := func(source string, want map[string]DiffServer) {
		t.Helper()
		var diff CatalogDiff
		api.get("/api/mcp/catalog/diff?source="+source, &diff)
		got := map[string]DiffServer{}
		for _, row := range diff.Servers {
			got[row.Name] = DiffServer{Status: row.Status, Fields: row.Fields}
			if string(row.Source) != source {
				t.Errorf("diff %s: row %+v of another source", source, row)
			}
		}
		for name, w := range want {
			g, ok := got[name]
			if !ok || g.Status != w.Status || (w.Fields != nil && !slices.Equal(g.Fields, w.Fields)) {
				t.Errorf("diff %s: %s = %+v, want %+v", source, name, g, w)
			}
		}
	}
	wantDiff("codex", map[string]DiffServer{
		"docs":  {Status: DiffConflict},
		"figma": {Status: DiffSame, Fields: []string{}},
		"tick":  {Status: DiffChange, Fields: []string{"env.GREETING"}},
		"tock":  {Status: DiffAdd, Fields: []string{}},
	})
	if !strings.Contains(api.answers[len(api.answers)-1], `"name":"docs","status":"conflict","fields":["command"`) {
		t.Errorf("the docs conflict does not name command: %s", api.answers[len(api.answers)-1])
	}
	wantDiff("claude-code", map[string]DiffServer{"withref": {Status: DiffAdd, Fields: []string{}}})

	// Apply two entries: both come up ready with tools.
	withrefFile := home + "/.claude.json#projects/" + project
	body := `{"entries": [{"source": "claude-code", "file": ` + strconv.Quote(withrefFile) + `, "name": "withref"}, {"source": "codex", "name": "tock"}]}`
	var applied CatalogApply
	if err := json.Unmarshal(api.do(http.MethodPost, "/api/mcp/catalog/apply", body, http.StatusOK), &applied); err != nil {
		t.Fatal(err)
	}
	if len(applied.Results) != 2 {
		t.Fatalf("apply results: %+v", applied.Results)
	}
	for i, name := range []string{"withref", "tock"} {
		r := applied.Results[i]
		if r.Status != ApplyAdded || r.Server != name || r.Entry == nil || r.Error != "" {
			t.Errorf("apply result %d = %+v, want %s added", i, r, name)
		}
	}
	if r := applied.Results[0]; r.Entry != nil && r.Entry.Env["TOKEN"] != (config.SecretView{HasValue: true, Reference: "${GITHUB_TOKEN}"}) {
		t.Errorf("the apply answer shows TOKEN as %+v, want its reference", r.Entry.Env["TOKEN"])
	}
	local := newAPI(t, rt)
	for _, name := range []string{"withref", "tock"} {
		local.waitState(name, status.Ready)
		var d ServerDetail
		api.get("/api/mcp/servers/"+name, &d)
		if d.State != status.Ready || d.ToolCount == 0 || len(d.Tools) != d.ToolCount {
			t.Errorf("%s after the apply: state %s, %d tools (%d listed)", name, d.State, d.ToolCount, len(d.Tools))
		}
	}
	var d ServerDetail
	api.get("/api/mcp/servers/withref", &d)
	if d.Env["TOKEN"] != (config.SecretView{HasValue: true, Reference: "${GITHUB_TOKEN}"}) {
		t.Errorf("GET withref shows TOKEN as %+v, want its reference", d.Env["TOKEN"])
	}
	// The server process got the value; read from /proc, so that no
	// answer carries it.
	if d.PID == 0 || testutil.EnvOf(d.PID, "TOKEN") != acceptToken {
		t.Errorf("the withref process (pid %d) did not get the expanded ${GITHUB_TOKEN}", d.PID)
	}
	var servers struct{ Servers []ServerEntry }
	api.get("/api/mcp/servers", &servers)
	names := []string{}
	for _, s := range servers.Servers {
		names = append(names, s.Name)
		if s.Name == "withref" && s.Env["TOKEN"].Reference != "${GITHUB_TOKEN}" {
			t.Errorf("the list shows withref's TOKEN as %+v", s.Env["TOKEN"])
		}
	}
	sort.Strings(names)
	if !slices.Equal(names, []string{"docs", "figma", "tick", "tock", "withref"}) {
		t.Errorf("servers after the apply: %q", names)
	}

	// Applied, the entries are the same as the config; the file keeps
	// the reference.
	wantDiff("codex", map[string]DiffServer{"tock": {Status: DiffSame, Fields: []string{}}, "tick": {Status: DiffChange}})
	wantDiff("claude-code", map[string]DiffServer{"withref": {Status: DiffSame, Fields: []string{}}})
	var again CatalogList
	api.get("/api/mcp/catalog", &again)
	file := string(readConfig(t, rt))
	if !strings.Contains(file, `"TOKEN": "${GITHUB_TOKEN}"`) || strings.Contains(file, acceptToken) {
		t.Errorf("the config file does not keep the reference:\n%s", strings.ReplaceAll(file, acceptToken, "<TOKEN>"))
	}

	// The events, through the API too: a foreign last_event_id replays
	// the history from its first event.
	held := drain(all)
	if len(held) == 0 {
		t.Fatal("no events")
	}
	var ev strings.Builder
	for _, e := range held {
		js, _ := json.Marshal(e)
		ev.Write(js)
		ev.WriteByte('\n')
	}
	stream := openEvents(t, ts, "/api/mcp/events?last_event_id=other-1", nil)
	last := held[len(held)-1].Head().Seq
	for {
		f, ok := stream.frame(t)
		if !ok {
			t.Fatal("the event stream ended before the history's last event")
		}
		ev.WriteString(f.raw)
		ev.WriteByte('\n')
		if uint64(f.num("seq")) >= last {
			break
		}
	}
	stream.close()
	if !strings.Contains(ev.String(), "withref") {
		t.Error("the events say nothing of withref: the check would check nothing")
	}

	answers := append(api.answers, ev.String())
	for i, a := range answers {
		if strings.Contains(a, hostMarkers) {
			t.Errorf("answer %d shows a planted host secret (%s...)", i, hostMarkers)
		}
	}
	if strings.Contains(rt.logs.String(), hostMarkers) {
		t.Error("the logs show a planted host secret")
	}
	assertScrubbed(t, rt, []string{acceptToken}, answers...)
}
