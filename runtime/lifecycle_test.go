package runtime

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/status"
)

// Start returns while a server is still waiting; nothing is registered
// before initialize succeeded.
func TestStartDoesNotWaitForServers(t *testing.T) {
	hung := exampleServer("hung", "-hang-initialize")
	hung.TimeoutSeconds = 30
	rt := start(t, Options{}, hung, exampleServer("later"))
	st := rt.Status()
	if len(st.Servers) != 2 || st.Servers[0].Name != "hung" || st.Servers[1].Name != "later" {
		t.Fatalf("status = %+v, want both servers in config order", st)
	}
	for _, s := range st.Servers {
		if s.State != status.Starting || s.Ready || s.ToolCount != 0 {
			t.Errorf("%s = %+v, want starting, not ready, no tools", s.Name, s)
		}
	}
	if n := len(rt.Tools()); n != 0 {
		t.Errorf("%d tools registered before any initialize", n)
	}
}

// Shutdown during startup cancels the pending connect and leaves no
// process, even for a server that ignores SIGTERM.
func TestShutdownDuringStartup(t *testing.T) {
	hung := exampleServer("hung", "-hang-initialize", "-ignore-sigterm")
	hung.TimeoutSeconds = 60
	rt := start(t, Options{StopGrace: 200 * time.Millisecond}, hung, exampleServer("never"))
	waitForProcesses(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := rt.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if left := testutil.ProcessesWithMarker(marker); len(left) > 0 {
		t.Fatalf("processes left: %v", left)
	}
	if n := len(rt.Tools()); n != 0 {
		t.Fatalf("%d tools registered after shutdown", n)
	}
}

// Cancelling Start's context shuts the runtime down by itself.
func TestStartContextCancelShutsDown(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteConfig(t, dir, exampleServer("ex"))
	ctx, cancel := context.WithCancel(context.Background())
	rt, err := Start(ctx, Options{StateDir: dir, StopGrace: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	waitForProcesses(t, 1)
	cancel()
	waitCtx, waitCancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer waitCancel()
	if err := rt.Shutdown(waitCtx); err != nil {
		t.Fatalf("Shutdown after ctx cancel: %v", err)
	}
	if left := testutil.ProcessesWithMarker(marker); len(left) > 0 {
		t.Fatalf("processes left: %v", left)
	}
}

// A file that does not parse: the runtime runs with no servers, says why,
// and the file is untouched.
func TestUnparsableConfig(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, config.FileName)
	broken := []byte(`{"servers": {"a": {"type": "local", "command": ["x"]},}}`)
	if err := os.WriteFile(path, broken, 0o644); err != nil {
		t.Fatal(err)
	}
	rt, err := Start(context.Background(), Options{StateDir: dir})
	if err != nil {
		t.Fatalf("Start must not fail on a broken file: %v", err)
	}
	defer rt.Shutdown(context.Background())
	st := rt.Status()
	if st.ConfigError == "" || !strings.Contains(st.ConfigError, path) || len(st.Servers) != 0 {
		t.Fatalf("status = %+v, want a config error naming the file and no servers", st)
	}
	if got, _ := os.ReadFile(path); string(got) != string(broken) {
		t.Fatalf("file changed: %q", got)
	}
}

// An entry with a bad config fails alone, with the field named.
func TestInvalidEntryFailsAlone(t *testing.T) {
	bad := config.Server{Name: "bad", Type: config.TypeLocal, Enabled: true} // no command
	rt := start(t, Options{}, bad, exampleServer("good"))
	st := rt.waitSettled(t, "bad")
	if st.State != status.Failed || st.ErrorKind != status.KindInvalidConfig || !strings.Contains(st.Error, "command") {
		t.Fatalf("bad = %+v, want failed/invalid_config naming command", st)
	}
	if st := rt.waitSettled(t, "good"); st.State != status.Ready {
		t.Fatalf("good = %+v", st)
	}
}

func TestDisabledServerStartsNothing(t *testing.T) {
	off := exampleServer("off")
	off.Enabled = false
	rt := start(t, Options{}, off, exampleServer("on"))
	rt.waitSettled(t, "on")
	st := rt.waitSettled(t, "off")
	if st.State != status.Disabled || st.Ready {
		t.Fatalf("off = %+v, want disabled", st)
	}
	if n := len(testutil.ProcessesWithMarker(marker)); n != 1 {
		t.Fatalf("%d server processes, want only the enabled one", n)
	}
	for _, tool := range rt.Tools() {
		if tool.Server == "off" {
			t.Fatalf("tool %s of a disabled server", tool.Name)
		}
	}
}

// A server whose process dies is marked failed and its tools go at once.
func TestLostSessionUnregistersTools(t *testing.T) {
	// A long first delay holds the server in backoff for the checks.
	rt := start(t, Options{Restart: RestartPolicy{Initial: time.Hour}}, exampleServer("ex", "-exit-after-calls", "1"))
	rt.waitReady(t, "ex")
	sub := rt.subscribe(t, "ex")
	mustCall(t, rt, "ex__echo", map[string]any{"text": "bye"})
	testutil.Await(t, sub, 10*time.Second, "ex's tools withdrawn after the server exited", func(e events.ToolsChanged) bool { return e.Count == 0 })
	if n := len(rt.Tools()); n != 0 {
		t.Fatalf("%d tools still registered after the server exited", n)
	}
	rt.waitState(t, "ex", status.Backoff)
	st, _ := rt.board.Get("ex")
	// next_retry_at follows Options.Restart (an hour, ±20 %).
	if st.ErrorKind != status.KindSessionLost || !strings.Contains(st.LastError, "lost") || st.NextRetryAt == nil || st.NextRetryAt.Before(time.Now().Add(30*time.Minute)) {
		t.Fatalf("status = %+v, want backoff with last_error and next_retry_at about an hour away", st)
	}
}

// A lost session comes back by itself after the backoff (V1): tools gone
// at once, then registered again on a new process, restarts=1.
func TestLostSessionRecovers(t *testing.T) {
	rt := start(t, Options{}, exampleServer("ex"))
	first := rt.waitSettled(t, "ex")
	if err := testutil.Kill(first.PID); err != nil {
		t.Fatal(err)
	}
	if st := rt.waitBack(t, "ex"); st.PID == first.PID || st.Restarts != 1 || !strings.Contains(st.LastError, "lost") {
		t.Fatalf("recovered status = %+v, want a new process, restarts=1 and the loss as last_error", st)
	}
	if res := mustCall(t, rt, "ex__echo", map[string]any{"text": "back"}); res.Content[0].Text != "back" {
		t.Fatalf("echo after recovery = %+v", res)
	}
	if n := len(testutil.ProcessesWithMarker(marker)); n != 1 {
		t.Fatalf("%d server processes after recovery, want 1", n)
	}
}

// An error a retry cannot fix is not retried: the server waits for a
// management action.
func TestUnfixableLossNotRetried(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "server")
	data, err := os.ReadFile(demoBin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	srv := exampleServer("ex")
	srv.Command = []string{bin, "serve"}
	var opts Options
	clock := fakeClock(&opts)
	rt := start(t, opts, srv)
	first := rt.waitSettled(t, "ex")
	os.Remove(bin) // the next start cannot find the command
	if err := testutil.Kill(first.PID); err != nil {
		t.Fatal(err)
	}
	// The loss itself is retried, after the first backoff.
	rt.waitState(t, "ex", status.Backoff)
	waitTimers(t, clock, 1)
	lost, _ := rt.board.Get("ex")
	// The state's time and its retry time are on the runtime's clock: the
	// retry is the first backoff (200ms ±20 %) after it.
	if wait := lost.NextRetryAt.Sub(lost.Since); !lost.Since.Equal(clock.Now()) || wait < 160*time.Millisecond || wait > 240*time.Millisecond {
		t.Fatalf("backoff since %v, retry at %v; want since the clock's %v and the retry 200ms ±20%% later", lost.Since, lost.NextRetryAt, clock.Now())
	}
	advanceTo(clock, *lost.NextRetryAt)
	rt.waitState(t, "ex", status.Failed)
	st, _ := rt.board.Get("ex")
	if st.ErrorKind != status.KindCommandNotFound || st.NextRetryAt != nil {
		t.Fatalf("status = %+v, want failed/command_not_found and no retry", st)
	}
	rt.settle(t, "manager/ex")
	noTimers(t, clock) // nothing may retry
	clock.Advance(time.Hour)
	rt.settle(t, "manager/ex")
	if st, _ := rt.board.Get("ex"); st.State != status.Failed {
		t.Fatalf("status = %+v after an hour, want still failed", st)
	}
}

func waitForProcesses(t *testing.T, n int) {
	t.Helper()
	testutil.Eventually(t, 10*time.Second, fmt.Sprintf("%d server processes", n), func() bool { return len(testutil.ProcessesWithMarker(marker)) >= n })
}

// waitProcessCount waits up to 10s for exactly n server processes and
// returns the count it saw last.
func waitProcessCount(n int) int {
	var got int
	testutil.Within(10*time.Second, func() bool { got = len(testutil.ProcessesWithMarker(marker)); return got == n })
	return got
}
