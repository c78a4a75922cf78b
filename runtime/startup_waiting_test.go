package runtime

import (
	"context"
	"errors"
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

// Operations on servers still waiting for their startup turn, and on
// servers whose PATCH a reload overtakes.

// A server whose actor died while it waits for its turn shows that it
// waits (backoff, no retry time: no timer will start it), and a PATCH of
// its tools filter leaves it to its turn, which starts it on the filter
// saved. (The PATCH used to take it out of its turn with no actor to
// retune, so nothing ever started it.) The hour-long first backoff shows
// that no respawn timer is what starts it.
func TestStartupWaitingDeadFilterPatchKeepsTurn(t *testing.T) {
	rt := start(t, Options{StartupConcurrency: 1, Debug: true, Restart: RestartPolicy{Initial: time.Hour}},
		hangingFirst(exampleServer("s1"))...)
	sub := killWaitingS1(t, rt)
	if st := mustStatus(t, rt, "s1"); st.NextRetryAt != nil || !strings.Contains(st.Error, "startup turn") {
		t.Errorf("s1 after its actor died = %s %q, next retry %v; want it shown waiting for its startup turn, no retry time", st.State, st.Error, st.NextRetryAt)
	}
	if _, err := rt.PatchServer(t.Context(), "s1", []byte(`{"tools":{"deny":["echo"]}}`)); err != nil {
		t.Fatalf("patch = %v", err)
	}
	s1WaitsForS0(t, rt, sub, "s1 started outside the slots by its PATCH")
	if st := mustStatus(t, rt, "s1"); st.ToolsFiltered != 1 {
		t.Errorf("s1 = %+v, want echo filtered as the PATCH saved", st)
	}
}

// A restart of a server whose actor died while it waits for its turn
// starts it on the file as it is now (L3), not on what startup read.
func TestStartupWaitingDeadRestartReadsFile(t *testing.T) {
	rt := start(t, Options{StartupConcurrency: 1, Debug: true, Restart: RestartPolicy{Initial: time.Hour}},
		hangingFirst(exampleServer("s1"))...)
	killWaitingS1(t, rt)
	edited := exampleServer("s1")
	edited.Tools = config.ToolFilter{Deny: []string{"echo"}}
	testutil.WriteConfig(t, rt.dir, hangingFirst(edited)...)
	if _, err := rt.RestartServer(t.Context(), "s1"); err != nil {
		t.Fatalf("restart = %v", err)
	}
	if st := mustStatus(t, rt, "s1"); st.State != status.Ready || st.ToolsFiltered != 1 {
		t.Errorf("s1 after its restart = %+v, want ready with echo filtered as the file says", st)
	}
}

// A reload that changes a server whose PATCH is still connecting, while
// the one slot is busy, supersedes the PATCH: it does not save over the
// file the reload read, nor undo itself outside the slots; until its turn
// the server goes back to its config from before the PATCH (not serving
// the PATCH's, which the file does not hold), and it starts at its turn
// on the file. The PATCH's connect never answers, so
// the PATCH ends only by being superseded (or, without that, by failing
// after its connect_timeout_seconds).
func TestReloadDuringPatchSupersedesIt(t *testing.T) {
	ex := exampleServer("ex")
	s0 := hangingFirst()[0]
	rt := start(t, Options{StartupConcurrency: 1}, ex, s0)
	rt.waitReady(t, "ex")
	waitForProcesses(t, 2) // s0 in its initialize, holding the slot
	first := testutil.ProcessesWithMarker(marker)
	patched := make(chan error, 1)
	go func() {
		_, err := rt.PatchServer(context.Background(), "ex",
			[]byte(`{"command": ["`+demoBin+`", "serve", "-hang-initialize"], "connect_timeout_seconds": 5}`))
		patched <- err
	}()
	testutil.Eventually(t, 10*time.Second, "ex's PATCH process", func() bool {
		return slices.ContainsFunc(testutil.ProcessesWithMarker(marker), func(pid int) bool { return !slices.Contains(first, pid) })
	})
	hand := exampleServer("ex")
	hand.Env["CHANGED"] = "hand"
	testutil.WriteConfig(t, rt.dir, hand, s0)
	if res, err := rt.Reload(t.Context()); err != nil || !slices.Equal(res.Restarted, []string{"ex"}) {
		t.Fatalf("reload = %+v, %v", res, err)
	}
	if err := <-patched; !errors.Is(err, ErrSuperseded) {
		t.Errorf("patch = %v, want superseded by the reload", err)
	}
	f, err := (config.Store{Dir: func() (string, error) { return rt.dir, nil }}).Load()
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := f.Get("ex"); !got.Equal(hand) {
		t.Errorf("file's ex after the reload and the PATCH = %v %v, want the hand edit", got.Command, got.Env)
	}
	// Until its turn, ex is back on what it ran before the PATCH, not on
	// the PATCH's config, which the file does not hold.
	rt.waitReady(t, "ex")
	if res := mustCall(t, rt, "ex__env", map[string]any{"name": "CHANGED"}); res.Content[0].Text != "" {
		t.Errorf("ex before its turn runs with CHANGED=%q, want its config from before the PATCH", res.Content[0].Text)
	}
	sub := rt.subscribe(t, "ex")
	if err := rt.RemoveServer(t.Context(), "s0"); err != nil {
		t.Fatal(err)
	}
	testutil.AwaitEvent(t, sub, 30*time.Second, "ex's session at its turn", func(e events.Event) bool {
		_, ok := e.(events.SessionStarted)
		return ok
	})
	rt.waitReady(t, "ex")
	if res := mustCall(t, rt, "ex__env", map[string]any{"name": "CHANGED"}); res.Content[0].Text != "hand" {
		t.Errorf("ex runs with CHANGED=%q, want the hand edit's", res.Content[0].Text)
	}
}

// A PATCH whose connect fails, of a server still waiting for its startup
// turn, puts it back on the file as it is now (hand-edited since start),
// not on what startup read: as its turn, and a restart, would.
func TestStartupWaitingFailedPatchFallsBackToFile(t *testing.T) {
	rt := start(t, Options{StartupConcurrency: 1}, hangingFirst(exampleServer("s1"))...)
	waitForProcesses(t, 1) // s0's turn, its initialize waiting; s1 waits
	hand := exampleServer("s1")
	hand.Env["CHANGED"] = "hand"
	testutil.WriteConfig(t, rt.dir, hangingFirst(hand)...)
	_, err := rt.PatchServer(t.Context(), "s1", []byte(`{"command": ["`+filepath.Join(t.TempDir(), "missing")+`"]}`))
	if !errors.Is(err, ErrRestartFailed) {
		t.Fatalf("patch = %v, want its connect failed", err)
	}
	rt.waitReady(t, "s1")
	if res := mustCall(t, rt, "s1__env", map[string]any{"name": "CHANGED"}); res.Content[0].Text != "hand" {
		t.Errorf("s1 after the failed PATCH runs with CHANGED=%q, want the file's (the hand edit)", res.Content[0].Text)
	}
	if _, err := rt.RestartServer(t.Context(), "s1"); err != nil {
		t.Fatalf("restart = %v", err)
	}
	rt.waitReady(t, "s1")
	if res := mustCall(t, rt, "s1__env", map[string]any{"name": "CHANGED"}); res.Content[0].Text != "hand" {
		t.Errorf("s1 restarted after the failed PATCH runs with CHANGED=%q, want the file's (the hand edit)", res.Content[0].Text)
	}
}
