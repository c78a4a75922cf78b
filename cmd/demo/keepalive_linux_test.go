package main

import (
	"encoding/json"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/internal/testutil"
)

// demo run -keepalive sets the probe interval: a server stopped with
// SIGSTOP is killed and restarted long before the 30s default would.
func TestRunKeepAliveFlag(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteConfig(t, dir, config.Server{Name: "ex", Type: config.TypeLocal, Command: []string{demoBin, "serve"}, Enabled: true,
		Env: map[string]string{testutil.MarkerEnv: marker}})
	cmd, base, _ := startRun(t, dir, "-keepalive", "200ms")
	awaitState(t, base, "ex", "ready", 30*time.Second)
	type entry struct {
		State    string
		PID      int
		Restarts int
	}
	get := func() entry {
		var e entry
		if r, err := http.Get(base + "/api/mcp/servers/ex"); err == nil {
			_ = json.NewDecoder(r.Body).Decode(&e)
			r.Body.Close()
		}
		return e
	}
	first := get()
	if first.PID <= 0 {
		t.Fatalf("ex = %+v", first)
	}
	if err := syscall.Kill(-first.PID, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	var now entry
	if !testutil.Within(10*time.Second, func() bool {
		now = get()
		return now.State == "ready" && now.Restarts > 0 && now.PID != first.PID
	}) {
		t.Errorf("a stopped server under -keepalive 200ms was not restarted: %+v (was %+v)", now, first)
	}
	if left := testutil.LiveInGroup(first.PID); len(left) > 0 {
		t.Errorf("the stopped group %d still has %v", first.PID, left)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	if err := waitBounded(cmd, 30*time.Second); err != nil {
		t.Fatalf("demo run after SIGTERM: %v", err)
	}
}
