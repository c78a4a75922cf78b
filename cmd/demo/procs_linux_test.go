package main

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/internal/testutil"
)

// demo run is a child subreaper (issue 10, finding 10): a server's helper
// that double-forked into a new session is adopted by demo run, killed
// when its server is deleted, and reaped by demo run itself, so that not
// even a zombie is left once DELETE answered.
func TestRunReapsDescendantsThatLeftTheGroup(t *testing.T) {
	runAndDelete(t, `(setsid sleep 1000 &); exec "$1" serve`, true)
}

// A member of the server's group that its leader left behind (orphaned,
// so adopted by demo run) is killed and reaped at the server's stop: it
// is found by its mark while alive, before the group kill makes it a
// zombie that no mark scan could tell.
func TestRunReapsOrphanedGroupMembers(t *testing.T) {
	runAndDelete(t, `sleep 1000 & exec "$1" serve`, false)
}

// runAndDelete runs demo run with one server, script under sh -c (with
// demo's path as $1) that leaves a "sleep 1000" behind, deletes the
// server and checks that neither the sleep nor any zombie child of demo
// run is left once DELETE answered. orphan: the sleep is an orphan from
// the start (demo run's child, as a subreaper).
func runAndDelete(t *testing.T, script string, orphan bool) {
	dir := t.TempDir()
	forker := config.Server{Name: "forker", Type: config.TypeLocal, Enabled: true,
		Command: []string{"sh", "-c", script, "sh", demoBin}}
	testutil.WriteConfig(t, dir, forker)
	cmd, base, logs := startRun(t, dir)

	deadline := time.Now().Add(30 * time.Second)
	awaitState(t, base, "forker", "ready", time.Until(deadline))
	var sleeper int
	testutil.Eventually(t, time.Until(deadline), "a sleep 1000", func() bool {
		for _, pid := range testutil.ProcessesWithEnv(testutil.MarkerEnv, marker) {
			if slices.Equal(testutil.Cmdline(pid), []string{"sleep", "1000"}) {
				sleeper = pid
			}
		}
		return sleeper != 0
	})
	if got := testutil.Parent(sleeper); orphan && got != cmd.Process.Pid {
		t.Errorf("the orphaned sleep's parent is %d, want demo run (%d), a subreaper", got, cmd.Process.Pid)
	}

	req, _ := http.NewRequest(http.MethodDelete, base+"/api/mcp/servers/forker", strings.NewReader("{}"))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %d", resp.StatusCode)
	}
	if err := syscall.Kill(sleeper, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the sleep %d still exists (even as a zombie) after DELETE answered: %v", sleeper, err)
	}
	if z := testutil.ZombieChildrenOf(cmd.Process.Pid); len(z) > 0 {
		t.Errorf("zombie children of demo run after DELETE answered: %v", z)
	}

	_ = cmd.Process.Signal(syscall.SIGTERM)
	if err := waitBounded(cmd, 30*time.Second); err != nil {
		t.Fatalf("demo run after SIGTERM: %v\n%s", err, logs.String())
	}
}
