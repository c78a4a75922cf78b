package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/status"
)

// The acceptance table of DESIGN §4, row by row, through the runtime's Go
// API (the HTTP tests cover the same rows through the handler).

// Row "real runtime start and /healthz": ready while an optional MCP
// transport is still waiting; a host readiness gate still gates.
func TestAcceptance_HealthyWhileTransportWaits(t *testing.T) {
	hung := exampleServer("hung", "-hang-initialize")
	hung.TimeoutSeconds = 60
	gate := make(chan struct{})
	rt := start(t, Options{Ready: func(context.Context) error {
		select {
		case <-gate:
			return nil
		default:
			return errors.New("host still recovering")
		}
	}}, hung)
	waitForProcesses(t, 1) // the server is really waiting on initialize now
	if err := rt.Healthy(context.Background()); err == nil || !strings.Contains(err.Error(), "recovering") {
		t.Fatalf("Healthy = %v, want the host gate's error", err)
	}
	close(gate)
	if err := rt.Healthy(context.Background()); err != nil {
		t.Fatalf("Healthy = %v with a server still waiting on initialize", err)
	}
	if st := rt.Servers()[0]; st.State != status.Starting || st.Ready {
		t.Fatalf("hung server = %+v, want starting", st)
	}
}

// Row "status and tool registry": starting/failed clients visible;
// ready/error/auth true; secrets masked; no early tool registration.
func TestAcceptance_StatusAndRegistry(t *testing.T) {
	const secret = "sk-status-row-secret-77aa"
	hung := exampleServer("hung", "-hang-initialize")
	hung.TimeoutSeconds = 2
	hung.Env["API_KEY"] = secret
	broken := exampleServer("broken")
	broken.Command = []string{"/nonexistent/server"}
	remote := config.Server{Name: "remote", Type: config.TypeHTTP, URL: "http://127.0.0.1:1/mcp", Enabled: true,
		Headers: map[string]string{"X-Key": secret}, Auth: &config.Auth{Kind: config.AuthBearer, Token: secret}}
	rt := start(t, Options{}, hung, broken, exampleServer("ok"), remote)

	entries := rt.Servers()
	if entries[0].Name != "hung" || entries[0].State != status.Starting || entries[0].Ready || entries[0].ToolCount != 0 {
		t.Fatalf("hung while waiting = %+v", entries[0])
	}
	if len(rt.Tools()) != 0 {
		t.Fatal("tools registered before any initialize finished")
	}
	rt.waitSettled(t, "remote")
	byName := map[string]ServerEntry{}
	for _, e := range rt.Servers() {
		byName[e.Name] = e
	}
	if e := byName["hung"]; e.State != status.Backoff || e.ErrorKind != status.KindTimeout || !e.Env["API_KEY"].HasValue {
		t.Errorf("hung = %+v", e)
	}
	if e := byName["broken"]; e.State != status.Failed || e.Error == "" || e.ErrorKind != status.KindCommandNotFound {
		t.Errorf("broken = %+v", e)
	}
	if e := byName["ok"]; e.State != status.Ready || !e.Ready || e.ToolCount == 0 {
		t.Errorf("ok = %+v", e)
	}
	if e := byName["remote"]; !e.Auth.HasToken || e.Auth.Kind != "bearer" || !e.Headers["X-Key"].HasValue {
		t.Errorf("remote auth/headers = %+v", e)
	}
	all, _ := json.Marshal(rt.Servers())
	st, _ := json.Marshal(rt.Status())
	for what, text := range map[string]string{"servers": string(all), "status": string(st), "logs": rt.logs.String()} {
		if strings.Contains(text, secret) {
			t.Errorf("a planted secret appears in %s", what)
		}
	}
}

// Row "connect succeeds": namespaced tools available through the API.
func TestAcceptance_ConnectSucceeds(t *testing.T) {
	rt := start(t, Options{}, exampleServer("drawio"))
	rt.waitSettled(t, "drawio")
	d, err := rt.Server("drawio")
	if err != nil {
		t.Fatal(err)
	}
	if d.State != status.Ready || len(d.Tools) == 0 || d.Tools[0].Name != "drawio__"+d.Tools[0].OriginalName {
		t.Fatalf("detail = %+v", d)
	}
	if _, ok := rt.Registry().Get("drawio__echo"); !ok {
		t.Fatal("drawio__echo not registered")
	}
}

// Row "shutdown during startup": startup cancelled and awaited; client,
// session and registrations released; nothing registers after.
func TestAcceptance_ShutdownDuringStartup(t *testing.T) {
	hung := exampleServer("hung", "-hang-initialize", "-ignore-sigterm")
	hung.TimeoutSeconds = 60
	rt := start(t, Options{StopGrace: 200 * time.Millisecond}, hung, exampleServer("next"))
	waitForProcesses(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := rt.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if left := testutil.ProcessesWithMarker(marker); len(left) > 0 {
		t.Fatalf("processes left: %v", left)
	}
	if len(rt.Tools()) != 0 {
		t.Fatal("tools registered after shutdown")
	}
	if _, err := rt.AddServer(context.Background(), exampleServer("late")); !errors.Is(err, ErrShuttingDown) {
		t.Fatalf("AddServer after shutdown: %v", err)
	}
}

// Row "delete/disable a later server while startup waits": after the
// earlier connect resumes, that server stays absent/disabled (no process,
// no tools); a same-name client from a management call stays.
func TestAcceptance_DeleteDisableLaterServerWhileStartupWaits(t *testing.T) {
	hung := exampleServer("first", "-hang-initialize")
	hung.TimeoutSeconds = 5
	// A long first backoff keeps "first" from retrying during the checks.
	rt := start(t, Options{Restart: RestartPolicy{Initial: time.Hour}}, hung, exampleServer("disabled_later"), exampleServer("deleted_later"), exampleServer("readded"),
		exampleServer("restarted"), exampleServer("hand_disabled"))
	ctx := context.Background()
	waitForProcesses(t, 1) // "first" is connecting; the others wait for their turn

	store := config.Store{Dir: func() (string, error) { return rt.dir, nil }}
	if e, err := rt.PatchServer(ctx, "disabled_later", []byte(`{"enabled": false}`)); err != nil || e.State != status.Disabled || e.Enabled {
		t.Fatalf("PATCH enabled=false: %+v, %v; want the entry to show it disabled", e, err)
	}
	if err := rt.RemoveServer(ctx, "deleted_later"); err != nil {
		t.Fatal(err)
	}
	if err := rt.RemoveServer(ctx, "readded"); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.AddServer(ctx, exampleServer("readded")); err != nil {
		t.Fatal(err)
	}
	if st := rt.waitSettled(t, "readded"); st.State != status.Ready {
		t.Fatalf("re-added server = %+v", st)
	}
	readdedPID := mustStatus(t, rt, "readded").PID
	if e, err := rt.RestartServer(ctx, "restarted"); err != nil || e.State != status.Ready {
		t.Fatalf("restart of a server still waiting for its turn: %+v, %v", e, err)
	}
	restartedPID := mustStatus(t, rt, "restarted").PID

	// Edited by hand, without a reload: startup must read the file anew.
	f, err := store.Load()
	if err != nil {
		t.Fatal(err)
	}
	hd, _ := f.Get("hand_disabled")
	hd.Enabled = false
	f.Put(hd)
	if err := store.Save(f); err != nil {
		t.Fatal(err)
	}

	// All of the above happened while startup still waited on "first";
	// otherwise this test would not test the row.
	if st := mustStatus(t, rt, "first"); st.State != status.Starting {
		t.Fatalf("first = %+v: startup stopped waiting before the management calls were done", st)
	}
	// The earlier connect resumes (here: times out) and startup goes on.
	sub := rt.subscribe(t, "")
	if st := rt.waitSettled(t, "first"); st.State != status.Backoff {
		t.Fatalf("first = %+v", st)
	}
	// must not come: startup, going on, starts a server a management call
	// changed meanwhile (no event says "startup is done").
	testutil.NoEvent(t, sub, 500*time.Millisecond, "a late start by startup", lateStart("disabled_later", "deleted_later", "readded", "restarted"))
	if st := mustStatus(t, rt, "disabled_later"); st.State != status.Disabled {
		t.Errorf("disabled_later = %+v", st)
	}
	if _, err := rt.Server("deleted_later"); !errors.Is(err, ErrUnknownServer) {
		t.Errorf("deleted_later still configured: %v", err)
	}
	if st := mustStatus(t, rt, "readded"); st.State != status.Ready || st.PID != readdedPID {
		t.Errorf("readded = %+v, want the management call's client (pid %d) untouched", st, readdedPID)
	}
	if st := mustStatus(t, rt, "restarted"); st.State != status.Ready || st.PID != restartedPID {
		t.Errorf("restarted = %+v, want the management call's client (pid %d) untouched", st, restartedPID)
	}
	if st := mustStatus(t, rt, "hand_disabled"); st.State != status.Disabled {
		t.Errorf("hand_disabled = %+v, want disabled as the file says now", st)
	}
	for _, tool := range rt.Tools() {
		if tool.Server == "disabled_later" || tool.Server == "deleted_later" {
			t.Errorf("tool %s of a server that must not run", tool.Name)
		}
	}
	// The first server's process may still be in its stop grace period.
	if n := waitProcessCount(2); n != 2 {
		t.Errorf("%d server processes, want only readded's and restarted's", n)
	}
	f, err = store.Load()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := f.Get("deleted_later"); ok {
		t.Error("deleted_later still in the file")
	}
	if s, _ := f.Get("disabled_later"); s.Enabled {
		t.Error("disabled_later enabled in the file")
	}
}

// C5: a PATCH whose restart fails leaves the file byte for byte unchanged
// and the server on its previous config.
func TestPatchFailedRestartChangesNothing(t *testing.T) {
	rt := start(t, Options{}, exampleServer("ex"))
	rt.waitSettled(t, "ex")
	path := filepath.Join(rt.dir, config.FileName)
	before, _ := os.ReadFile(path)
	_, err := rt.PatchServer(context.Background(), "ex", []byte(`{"command": ["/nonexistent/new-server"]}`))
	if !errors.Is(err, ErrRestartFailed) {
		t.Fatalf("PATCH = %v, want ErrRestartFailed", err)
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) {
		t.Fatalf("file changed by a failed PATCH:\n%s", after)
	}
	if st := rt.waitReady(t, "ex"); st.State != status.Ready {
		t.Fatalf("ex = %+v, want ready again on its old config", st)
	}
	if d, _ := rt.Server("ex"); d.Command[0] != demoBin {
		t.Fatalf("command after the failed PATCH = %v", d.Command)
	}
	// A PATCH that works is saved, 0600.
	if _, err := rt.PatchServer(context.Background(), "ex", []byte(`{"timeout_seconds": 7}`)); err != nil {
		t.Fatal(err)
	}
	f, _ := config.Store{Dir: func() (string, error) { return rt.dir, nil }}.Load()
	if s, _ := f.Get("ex"); s.TimeoutSeconds != 7 {
		t.Fatalf("timeout in the file = %d", s.TimeoutSeconds)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode = %v", fi.Mode())
	}
}

func mustStatus(t *testing.T, rt *testRuntime, name string) status.Server {
	t.Helper()
	st, ok := rt.board.Get(name)
	if !ok {
		t.Fatalf("no status for %q", name)
	}
	return st
}

// lateStart matches an event that would say a server that startup had
// not reached yet was started by it after a management call changed it.
func lateStart(names ...string) func(events.Event) bool {
	return func(e events.Event) bool {
		switch e.(type) {
		case events.StateChanged, events.SessionStarted, events.ServerAdded:
			return slices.Contains(names, e.Head().Server)
		}
		return false
	}
}
