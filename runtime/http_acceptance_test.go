package runtime

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/status"
)

// The acceptance table of DESIGN §4 through the management API: the same
// rows as acceptance_test.go, seen by an HTTP client.

// Row "real runtime start and /healthz": ready while an optional MCP
// transport is still waiting; a host readiness gate still gates.
func TestAcceptanceHTTP_HealthzReadyWhileTransportWaits(t *testing.T) {
	hung := exampleServer("hung", "-hang-initialize")
	hung.TimeoutSeconds = 60
	rt := start(t, Options{}, hung)
	api := newAPI(t, rt)
	var health map[string]string
	api.do("GET", "/healthz", "").want(t, http.StatusOK).decode(t, &health)
	if health["status"] != "ok" {
		t.Fatalf("healthz = %v", health)
	}
	waitForProcesses(t, 1) // the transport is up and waits on initialize
	api.do("GET", "/healthz", "").want(t, http.StatusOK)
	if d := api.entry("hung"); d.State != status.Starting || d.Ready || d.ToolCount != 0 {
		t.Fatalf("hung = %+v, want starting while /healthz is ok", d)
	}
	// The rest of the API answers while startup waits (L4).
	api.do("GET", "/api/mcp/tools", "").want(t, http.StatusOK)
	api.do("GET", "/debug/actors", "").want(t, http.StatusOK)
	api.do("POST", "/api/mcp/servers", exampleBody(t, "other", nil)).want(t, http.StatusCreated)
	api.waitState("other", status.Ready)
}

func TestAcceptanceHTTP_HealthzHostGateGates(t *testing.T) {
	var recovered atomic.Bool
	hung := exampleServer("hung", "-hang-initialize")
	hung.TimeoutSeconds = 60
	rt := start(t, Options{Ready: func(context.Context) error {
		if !recovered.Load() {
			return errors.New("host still recovering its sessions")
		}
		return nil
	}}, hung)
	api := newAPI(t, rt)
	e := api.do("GET", "/healthz", "").want(t, http.StatusServiceUnavailable).apiError(t)
	if !strings.Contains(e.Error, "recovering") {
		t.Fatalf("healthz error %q, want the host's reason", e.Error)
	}
	recovered.Store(true)
	api.do("GET", "/healthz", "").want(t, http.StatusOK)
	if d := api.entry("hung"); d.State != status.Starting {
		t.Fatalf("hung = %+v", d)
	}
	// Shutting down: no longer healthy.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := rt.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	api.do("GET", "/healthz", "").want(t, http.StatusServiceUnavailable)
	api.do("POST", "/api/mcp/servers", exampleBody(t, "late", nil)).want(t, http.StatusServiceUnavailable)
}

// Row "status and tool registry": starting/failed clients visible;
// ready/error/auth true; secrets masked; no early tool registration.
func TestAcceptanceHTTP_StatusAndRegistry(t *testing.T) {
	const secret = "sk-http-status-row-3141"
	hung := exampleServer("hung", "-hang-initialize")
	hung.TimeoutSeconds = 2
	hung.Env["API_KEY"] = secret
	broken := exampleServer("broken")
	broken.Command = []string{"/nonexistent/server"}
	remote := config.Server{Name: "remote", Type: config.TypeHTTP, URL: "http://127.0.0.1:1/mcp", Enabled: true, TimeoutSeconds: 2,
		Headers: map[string]string{"X-Key": secret}, Auth: &config.Auth{Kind: config.AuthBearer, Token: secret}}
	rt := start(t, Options{}, hung, broken, exampleServer("ok"), remote)
	api := newAPI(t, rt)

	var list serverList
	a := api.do("GET", "/api/mcp/servers", "").want(t, http.StatusOK)
	a.decode(t, &list)
	if len(list.Servers) != 4 || list.Servers[0].Name != "hung" || list.Servers[0].State != status.Starting || list.Servers[0].Ready {
		t.Fatalf("servers while hung waits = %s", a.body)
	}
	if toolsOf(t, api, "ok")+toolsOf(t, api, "hung") != 0 {
		t.Fatal("tools listed before their servers' turn")
	}
	bodies := []string{string(a.body)}
	for _, n := range []string{"hung", "broken", "remote"} {
		api.waitState(n, status.Failed, status.Backoff, status.Ready)
	}
	ok := api.waitState("ok", status.Ready)
	if !ok.Ready || ok.ToolCount == 0 || toolsOf(t, api, "ok") != ok.ToolCount {
		t.Errorf("ok = %+v", ok)
	}
	a = api.do("GET", "/api/mcp/servers", "").want(t, http.StatusOK)
	bodies = append(bodies, string(a.body))
	list = serverList{}
	a.decode(t, &list)
	byName := map[string]ServerEntry{}
	for _, e := range list.Servers {
		byName[e.Name] = e
	}
	// A timeout is retried after the backoff; the status says why meanwhile.
	if e := byName["hung"]; e.State == status.Ready || e.State == status.Starting && e.LastError == "" || e.ErrorKind != status.KindTimeout && e.State != status.Starting || !e.Env["API_KEY"].HasValue {
		t.Errorf("hung = %+v", e)
	}
	if e := byName["broken"]; e.State != status.Failed || e.ErrorKind != status.KindCommandNotFound || e.Error == "" {
		t.Errorf("broken = %+v", e)
	}
	if e := byName["remote"]; e.Auth.Kind != "bearer" || !e.Auth.HasToken || e.Auth.TokenMasked != config.Mask(secret) || !e.Headers["X-Key"].HasValue {
		t.Errorf("remote = %+v", e)
	}
	for _, n := range []string{"hung", "remote"} {
		bodies = append(bodies, string(api.do("GET", "/api/mcp/servers/"+n, "").want(t, http.StatusOK).body))
	}
	for _, b := range append(bodies, rt.logs.String()) {
		if strings.Contains(b, secret) {
			t.Fatalf("the planted secret appears: %s", b)
		}
	}
}

// Row "connect succeeds": namespaced tools available through the API.
func TestAcceptanceHTTP_ConnectSucceeds(t *testing.T) {
	rt := start(t, Options{}, exampleServer("drawio"))
	api := newAPI(t, rt)
	d := api.waitState("drawio", status.Ready)
	if len(d.Tools) == 0 || toolsOf(t, api, "drawio") != len(d.Tools) {
		t.Fatalf("detail tools %+v", d.Tools)
	}
	for _, te := range d.Tools {
		if te.Name != "drawio__"+te.OriginalName {
			t.Errorf("tool %+v is not namespaced", te)
		}
	}
	var res callResult
	api.do("POST", "/api/mcp/tools/drawio__echo/call", `{"arguments": {"text": "hi"}}`).want(t, http.StatusOK).decode(t, &res)
	if len(res.Content) != 1 || *res.Content[0].Text != "hi" {
		t.Fatalf("call = %+v", res)
	}
}

// Row "delete/disable a later server while startup waits": after the
// earlier connect resumes, that server stays absent/disabled (no process,
// no tools); a same-name client from a management call stays.
func TestAcceptanceHTTP_DeleteDisableLaterServerWhileStartupWaits(t *testing.T) {
	hung := exampleServer("first", "-hang-initialize")
	hung.TimeoutSeconds = 2
	// A long first backoff keeps "first" from retrying during the checks.
	rt := start(t, Options{Restart: RestartPolicy{Initial: time.Hour}}, hung, exampleServer("disabled_later"), exampleServer("deleted_later"), exampleServer("readded"))
	api := newAPI(t, rt)
	waitForProcesses(t, 1) // "first" is connecting; the others wait for their turn
	if d := api.entry("first"); d.State != status.Starting {
		t.Fatalf("first = %+v, want still starting", d)
	}

	api.do("PATCH", "/api/mcp/servers/disabled_later", `{"enabled": false}`).want(t, http.StatusOK)
	api.do("DELETE", "/api/mcp/servers/deleted_later", "").want(t, http.StatusNoContent)
	api.do("DELETE", "/api/mcp/servers/readded", "").want(t, http.StatusNoContent)
	api.do("POST", "/api/mcp/servers", exampleBody(t, "readded", nil)).want(t, http.StatusCreated)
	readdedPID := api.waitState("readded", status.Ready).PID
	if d := api.entry("first"); d.State != status.Starting {
		t.Fatalf("first = %+v: the management calls did not run while startup waited", d)
	}

	// The earlier connect resumes (it times out) and startup goes on.
	sub := rt.subscribe(t, "")
	api.waitState("first", status.Backoff)
	// must not come: startup, going on, starts a server a management call
	// changed meanwhile (no event says "startup is done").
	testutil.NoEvent(t, sub, 500*time.Millisecond, "a late start by startup", lateStart("disabled_later", "deleted_later", "readded"))
	if d := api.entry("disabled_later"); d.State != status.Disabled || d.Enabled || d.PID != 0 {
		t.Errorf("disabled_later = %+v", d)
	}
	api.do("GET", "/api/mcp/servers/deleted_later", "").want(t, http.StatusNotFound)
	if d := api.entry("readded"); d.State != status.Ready || d.PID != readdedPID {
		t.Errorf("readded = %+v, want the management call's client (pid %d) untouched", d, readdedPID)
	}
	if n := toolsOf(t, api, "disabled_later") + toolsOf(t, api, "deleted_later"); n != 0 {
		t.Errorf("%d tools of servers that must not run", n)
	}
	if got := api.names(); !slices.Equal(got, []string{"first", "disabled_later", "readded"}) {
		t.Errorf("servers = %v", got)
	}
	// The first server's process may still be in its stop grace period.
	if n := waitProcessCount(1); n != 1 {
		t.Errorf("%d server processes, want only readded's", n)
	}
	f := wantConfigMode0600(t, rt)
	if _, ok := f.Get("deleted_later"); ok {
		t.Error("deleted_later still in the file")
	}
	if s, _ := f.Get("disabled_later"); s.Enabled {
		t.Error("disabled_later enabled in the file")
	}
}
