package runtime

import (
	"bytes"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/status"
)

// TestHTTPServerLifecycle walks one server through every write route and
// checks after each that the file is owner-only and says what the answer
// said.
func TestHTTPServerLifecycle(t *testing.T) {
	rt := start(t, Options{}, exampleServer("ex"))
	// A file left 0644 by an older version becomes 0600 on the next save.
	if err := os.Chmod(rt.configPath(), 0o644); err != nil {
		t.Fatal(err)
	}
	api := newAPI(t, rt)
	api.waitState("ex", status.Ready)

	// POST: 201, Location, the entry starting, the file has it.
	a := serve(t, api.h, apiRequest{method: "POST", path: "/api/mcp/servers", ctype: "application/json; charset=utf-8",
		body: exampleBody(t, "added", map[string]any{"timeout_seconds": 20})})
	a.want(t, http.StatusCreated)
	var e ServerEntry
	a.decode(t, &e)
	if e.Name != "added" || e.Type != "local" || !e.Enabled || e.TimeoutSeconds != 20 || e.Ready {
		t.Fatalf("POST entry = %+v", e)
	}
	if loc := a.header.Get("Location"); loc != "/api/mcp/servers/added" {
		t.Errorf("Location %q", loc)
	}
	if f := wantConfigMode0600(t, rt); len(f.Servers) != 2 || f.Servers[1].Name != "added" {
		t.Fatalf("file after POST: %+v", f.Servers)
	}
	if got := api.names(); !slices.Equal(got, []string{"ex", "added"}) {
		t.Fatalf("servers = %v, want config order", got)
	}

	// GET detail once ready: tools and the stderr tail.
	d := api.waitState("added", status.Ready)
	if !d.Ready || d.ToolCount == 0 || len(d.Tools) != d.ToolCount || d.PID <= 0 || d.StderrTail == nil {
		t.Fatalf("detail = %+v", d)
	}
	if !slices.ContainsFunc(d.Tools, func(te ToolEntry) bool { return te.Name == "added__echo" && te.OriginalName == "echo" }) {
		t.Errorf("tools = %+v, want added__echo", d.Tools)
	}

	// PATCH a config change: the server restarts on it, then it is saved.
	oldPID := d.PID
	var patched ServerEntry
	api.do("PATCH", "/api/mcp/servers/added", `{"timeout_seconds": 25, "env": {"EXTRA": "x-value-123456"}}`).
		want(t, http.StatusOK).decode(t, &patched)
	if patched.TimeoutSeconds != 25 || !patched.Env["EXTRA"].HasValue || !patched.Env[testutil.MarkerEnv].HasValue {
		t.Fatalf("PATCH entry = %+v", patched)
	}
	f := wantConfigMode0600(t, rt)
	if s, _ := f.Get("added"); s.TimeoutSeconds != 25 || s.Env["EXTRA"] != "x-value-123456" || s.Env[testutil.MarkerEnv] != marker {
		t.Fatalf("file after PATCH: %v", s)
	}
	if d := api.waitState("added", status.Ready); d.PID == oldPID {
		t.Errorf("PATCH did not restart the server (pid %d)", d.PID)
	}

	// Disable: no process, no tools, saved; a restart of it is refused.
	var off ServerEntry
	api.do("PATCH", "/api/mcp/servers/added", `{"enabled": false}`).want(t, http.StatusOK).decode(t, &off)
	if off.Enabled {
		t.Fatalf("disable entry = %+v", off)
	}
	if s, _ := wantConfigMode0600(t, rt).Get("added"); s.Enabled {
		t.Fatal("disable not saved")
	}
	api.waitState("added", status.Disabled)
	if toolsOf(t, api, "added") != 0 {
		t.Error("tools of a disabled server listed")
	}
	before := readConfig(t, rt)
	if e := api.do("POST", "/api/mcp/servers/added/restart", "").want(t, http.StatusConflict).apiError(t); !strings.Contains(e.Error, "disabled") {
		t.Errorf("restart of a disabled server: %q", e.Error)
	}
	if !bytes.Equal(before, readConfig(t, rt)) {
		t.Fatal("a refused restart changed the file")
	}

	// Enable, then restart: 200 with the entry, a new process.
	api.do("PATCH", "/api/mcp/servers/added", `{"enabled": true}`).want(t, http.StatusOK)
	wantConfigMode0600(t, rt)
	pid := api.waitState("added", status.Ready).PID
	var restarted ServerEntry
	api.do("POST", "/api/mcp/servers/added/restart", "").want(t, http.StatusOK).decode(t, &restarted)
	if restarted.State != status.Ready || restarted.PID == pid || restarted.PID <= 0 {
		t.Fatalf("restart entry = %+v (old pid %d)", restarted, pid)
	}

	// DELETE: 204, gone from the list, the tools and the file.
	api.do("DELETE", "/api/mcp/servers/added", "").want(t, http.StatusNoContent)
	api.do("GET", "/api/mcp/servers/added", "").want(t, http.StatusNotFound)
	api.do("DELETE", "/api/mcp/servers/added", "").want(t, http.StatusNotFound)
	if toolsOf(t, api, "added") != 0 {
		t.Error("tools of a deleted server listed")
	}
	if f := wantConfigMode0600(t, rt); len(f.Servers) != 1 || f.Servers[0].Name != "ex" {
		t.Fatalf("file after DELETE: %+v", f.Servers)
	}
	if got := api.names(); !slices.Equal(got, []string{"ex"}) {
		t.Fatalf("servers after DELETE = %v", got)
	}
}

// TestHTTPPatchRestartFailed: a PATCH whose restart fails answers 502 with
// the reason, leaves the file byte for byte as it was, and the server runs
// on its previous config.
func TestHTTPPatchRestartFailed(t *testing.T) {
	rt := start(t, Options{}, exampleServer("ex"))
	api := newAPI(t, rt)
	api.waitState("ex", status.Ready)
	before := readConfig(t, rt)
	a := api.do("PATCH", "/api/mcp/servers/ex", `{"command": ["/nonexistent/new-server"]}`)
	a.want(t, http.StatusBadGateway)
	if e := a.apiError(t); !strings.Contains(e.Error, "restart") || !strings.Contains(e.Error, "/nonexistent/new-server") {
		t.Errorf("error %q does not say the restart on the new command failed", e.Error)
	}
	if !bytes.Equal(before, readConfig(t, rt)) {
		t.Fatal("file changed by a failed PATCH")
	}
	d := api.waitState("ex", status.Ready)
	if d.Command[0] != demoBin {
		t.Fatalf("command after the failed PATCH = %v", d.Command)
	}
	var res callResult
	api.do("POST", "/api/mcp/tools/ex__echo/call", `{"arguments": {"text": "still here"}}`).want(t, http.StatusOK).decode(t, &res)
	if len(res.Content) != 1 || res.Content[0].Text == nil || *res.Content[0].Text != "still here" {
		t.Fatalf("call after the failed PATCH = %+v", res)
	}
}

// TestHTTPReload: POST /api/mcp/reload applies a hand edit of the file
// and says what changed; the file itself is not rewritten.
func TestHTTPReload(t *testing.T) {
	rt := start(t, Options{}, exampleServer("keep"), exampleServer("drop"), exampleServer("change"))
	api := newAPI(t, rt)
	for _, n := range []string{"keep", "drop", "change"} {
		api.waitState(n, status.Ready)
	}
	keepPID := api.entry("keep").PID
	changed := exampleServer("change")
	changed.TimeoutSeconds = 12
	testutil.WriteConfig(t, rt.dir, exampleServer("keep"), changed, exampleServer("new"))
	edited := readConfig(t, rt)

	var res ReloadResult
	api.do("POST", "/api/mcp/reload", "").want(t, http.StatusOK).decode(t, &res)
	if !slices.Equal(res.Added, []string{"new"}) || !slices.Equal(res.Removed, []string{"drop"}) || !slices.Equal(res.Restarted, []string{"change"}) {
		t.Fatalf("reload = %+v", res)
	}
	if got := api.names(); !slices.Equal(got, []string{"keep", "change", "new"}) {
		t.Fatalf("servers after reload = %v", got)
	}
	if d := api.waitState("change", status.Ready); d.TimeoutSeconds != 12 {
		t.Errorf("change = %+v, want the new timeout", d)
	}
	api.waitState("new", status.Ready)
	if d := api.entry("keep"); d.PID != keepPID {
		t.Errorf("an unchanged server was restarted: pid %d, was %d", d.PID, keepPID)
	}
	if !bytes.Equal(edited, readConfig(t, rt)) {
		t.Error("reload rewrote the file")
	}
	// Nothing changed since: an empty result, as lists.
	a := api.do("POST", "/api/mcp/reload", "").want(t, http.StatusOK)
	if !bytes.Contains(a.body, []byte(`"added":[]`)) || !bytes.Contains(a.body, []byte(`"removed":[]`)) || !bytes.Contains(a.body, []byte(`"restarted":[]`)) {
		t.Errorf("idle reload = %s, want empty lists", a.body)
	}
}

// TestHTTPUnparsableConfig: with a config file that does not parse, reads
// work and say why, every write is refused with 409 and the file is never
// replaced; once fixed by hand and reloaded, writes work again.
func TestHTTPUnparsableConfig(t *testing.T) {
	broken := []byte(`{"servers": {"ex": {"type": "local", "command": ["x"], "env": {"K": "sk-broken-file-secret-1"}},}}`)
	rt := startWithFile(t, broken)
	api := newAPI(t, rt)

	api.do("GET", "/healthz", "").want(t, http.StatusOK)
	var list serverList
	api.do("GET", "/api/mcp/servers", "").want(t, http.StatusOK).decode(t, &list)
	if list.ConfigError == "" || len(list.Servers) != 0 {
		t.Fatalf("servers = %+v, want none and the config error", list)
	}
	api.do("GET", "/api/mcp/tools", "").want(t, http.StatusOK)
	api.do("GET", "/debug/actors", "").want(t, http.StatusOK)

	writes := []struct{ method, path, body string }{
		{"POST", "/api/mcp/servers", exampleBody(t, "new", nil)},
		{"PATCH", "/api/mcp/servers/ex", `{"timeout_seconds": 5}`},
		{"DELETE", "/api/mcp/servers/ex", ""},
		{"POST", "/api/mcp/servers/ex/restart", ""},
		{"POST", "/api/mcp/reload", ""},
	}
	for _, w := range writes {
		e := api.do(w.method, w.path, w.body).want(t, http.StatusConflict).apiError(t)
		if !strings.Contains(e.Error, "does not parse") || !strings.Contains(e.Error, "fix it by hand") {
			t.Errorf("%s %s: error %q does not say the file must be fixed", w.method, w.path, e.Error)
		}
		if strings.Contains(e.Error, "sk-broken-file-secret-1") {
			t.Errorf("%s %s: the error quotes the file's secret", w.method, w.path)
		}
		if got := readConfig(t, rt); !bytes.Equal(got, broken) {
			t.Fatalf("%s %s replaced the broken file: %s", w.method, w.path, got)
		}
	}

	// A reload of a file that still does not parse is refused the same way
	// (in the loop above) and keeps the error.
	api.do("GET", "/api/mcp/servers", "").want(t, http.StatusOK).decode(t, &list)
	if list.ConfigError == "" {
		t.Error("config error gone after a failed reload")
	}

	// Fixed by hand and reloaded: the server is back and writes work.
	if err := os.Remove(rt.configPath()); err != nil { // Save never replaces a broken file
		t.Fatal(err)
	}
	testutil.WriteConfig(t, rt.dir, exampleServer("ex"))
	var res ReloadResult
	api.do("POST", "/api/mcp/reload", "").want(t, http.StatusOK).decode(t, &res)
	if !slices.Equal(res.Added, []string{"ex"}) {
		t.Fatalf("reload after the fix = %+v", res)
	}
	var fixed serverList // a fresh value: decoding leaves absent fields as they were
	api.do("GET", "/api/mcp/servers", "").want(t, http.StatusOK).decode(t, &fixed)
	if fixed.ConfigError != "" || len(fixed.Servers) != 1 {
		t.Errorf("after the fix: %+v, want ex and no config error", fixed)
	}
	api.do("POST", "/api/mcp/servers", exampleBody(t, "new", map[string]any{"enabled": false})).want(t, http.StatusCreated)
	if f := wantConfigMode0600(t, rt); len(f.Servers) != 2 {
		t.Fatalf("file after the POST: %+v", f.Servers)
	}
}

// TestHTTPActorTree: GET /debug/actors shows the manager, each server and
// a stdio session with its pid.
func TestHTTPActorTree(t *testing.T) {
	rt := start(t, Options{}, exampleServer("ex"))
	api := newAPI(t, rt)
	pid := api.waitState("ex", status.Ready).PID
	var tree ActorNode
	api.do("GET", "/debug/actors", "").want(t, http.StatusOK).decode(t, &tree)
	if tree.Kind != "manager" || len(tree.Children) != 1 {
		t.Fatalf("tree = %+v", tree)
	}
	srv := tree.Children[0]
	if srv.Name != "ex" || srv.Kind != "server" || len(srv.Children) != 1 {
		t.Fatalf("server node = %+v", srv)
	}
	if s := srv.Children[0]; s.Kind != "session" || s.PID != pid || !strings.HasPrefix(s.Path, srv.Path) {
		t.Fatalf("session node = %+v, want pid %d under %s", s, pid, srv.Path)
	}
}
