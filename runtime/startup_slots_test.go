package runtime

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/exampleserver"
	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/status"
)

// The startup slots under management operations: what takes a slot,
// keeps it and gives it up.

// hangingFirst configures s0, which never answers initialize (and waits
// long for it, holding the one slot), then the servers after it.
func hangingFirst(after ...config.Server) []config.Server {
	s0 := exampleServer("s0", "-hang-initialize")
	s0.TimeoutSeconds = 120
	return append([]config.Server{s0}, after...)
}

// handshakes counts the lines of dir's initialize log so far (0 while
// there is none).
func handshakes(dir string) int {
	data, err := os.ReadFile(filepath.Join(dir, exampleserver.InitializeLog))
	if err != nil {
		return 0
	}
	return strings.Count(string(data), "\n")
}

// s1WaitsForS0 checks that s1 (sub follows it) does not start while s0
// holds the one slot, then removes s0 and waits for s1 to get its turn.
func s1WaitsForS0(t *testing.T, rt *testRuntime, sub *events.Subscription, what string) {
	t.Helper()
	testutil.NoEvent(t, sub, 2*time.Second, what, func(e events.Event) bool {
		_, ok := e.(events.SessionStarted)
		return ok
	})
	if err := rt.RemoveServer(t.Context(), "s0"); err != nil {
		t.Fatal(err)
	}
	if st := rt.waitSettled(t, "s1"); st.State != status.Ready {
		t.Fatalf("s1 = %+v", st)
	}
}

// A restart during a startup turn keeps the turn's slot: the new connect
// holds it until it settles, so the next server does not start beside it.
// s0's new connect never answers either, so s1 starts only once s0 is
// removed.
func TestStartupRestartDuringTurnKeepsSlot(t *testing.T) {
	rt := start(t, Options{StartupConcurrency: 1}, hangingFirst(exampleServer("s1"))...)
	waitForProcesses(t, 1) // s0's turn, its initialize waiting
	first := testutil.ProcessesWithMarker(marker)
	sub := rt.subscribe(t, "s1")
	restarted := make(chan error, 1)
	go func() {
		_, err := rt.RestartServer(context.Background(), "s0")
		restarted <- err
	}()
	testutil.Eventually(t, 10*time.Second, "s0's new process", func() bool {
		return slices.ContainsFunc(testutil.ProcessesWithMarker(marker), func(pid int) bool { return !slices.Contains(first, pid) })
	})
	s1WaitsForS0(t, rt, sub, "s1 starting beside s0's new connect")
	if err := <-restarted; !errors.Is(err, ErrSuperseded) {
		t.Errorf("restart = %v, want superseded by the removal", err)
	}
}

// A reload connects what it adds and restarts through the startup slots,
// in file order: with one slot, one connect at a time.
func TestReloadConnectsThroughSlots(t *testing.T) {
	dir := t.TempDir()
	rt := start(t, Options{StartupConcurrency: 1}, exampleServer("ex"))
	rt.waitReady(t, "ex")
	servers := slowServers(3, 300*time.Millisecond, dir)
	testutil.WriteConfig(t, rt.dir, append([]config.Server{exampleServer("ex")}, servers...)...)
	res, err := rt.Reload(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Added, []string{"s0", "s1", "s2"}) {
		t.Fatalf("reload = %+v", res)
	}
	for _, srv := range servers {
		if st := rt.waitSettled(t, srv.Name); st.State != status.Ready {
			t.Fatalf("%s = %+v", srv.Name, st)
		}
	}
	names, most := initializeLog(t, dir)
	if most != 1 || !slices.Equal(names, []string{"s0", "s1", "s2"}) {
		t.Errorf("added: handshakes %v with %d at once, want s0, s1, s2 one at a time", names, most)
	}

	// A change of all three restarts them, again one at a time.
	for i := range servers {
		servers[i].Env = map[string]string{testutil.MarkerEnv: marker, "CHANGED": "1"}
	}
	testutil.WriteConfig(t, rt.dir, append([]config.Server{exampleServer("ex")}, servers...)...)
	if res, err = rt.Reload(t.Context()); err != nil || !slices.Equal(res.Restarted, []string{"s0", "s1", "s2"}) {
		t.Fatalf("reload = %+v, %v", res, err)
	}
	testutil.Eventually(t, 30*time.Second, "three more handshakes", func() bool { return handshakes(dir) == 6 })
	rt.waitReady(t, "s2") // in its handshake now: ready once it answered
	names, most = initializeLog(t, dir)
	if most != 1 || !slices.Equal(names[3:], []string{"s0", "s1", "s2"}) {
		t.Errorf("restarted: handshakes %v with %d at once, want s0, s1, s2 one at a time", names, most)
	}
}

// A reload that changes only the tools filter of a server still waiting
// for its startup turn does not connect it outside the slots: it is
// reported as updated, and starts at its turn on the new filter.
func TestReloadFilterOfWaitingServer(t *testing.T) {
	later := exampleServer("later")
	rt := start(t, Options{StartupConcurrency: 1}, hangingFirst(later)...)
	waitForProcesses(t, 1) // s0 holds the slot; later waits for its turn
	sub := rt.subscribe(t, "later")
	later.Tools = config.ToolFilter{Deny: []string{"echo"}}
	testutil.WriteConfig(t, rt.dir, hangingFirst(later)...)
	res, err := rt.Reload(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Updated, []string{"later"}) || len(res.Restarted) != 0 {
		t.Errorf("reload = %+v, want later updated: nothing of it ran", res)
	}
	testutil.NoEvent(t, sub, time.Second, "later starting outside the slots", func(e events.Event) bool {
		_, ok := e.(events.SessionStarted)
		return ok
	})
	if err := rt.RemoveServer(t.Context(), "s0"); err != nil {
		t.Fatal(err)
	}
	if st := rt.waitSettled(t, "later"); st.State != status.Ready || st.ToolsFiltered != 1 {
		t.Fatalf("later = %+v, want ready with echo filtered", st)
	}
}

// Removing the server whose connect holds the one slot gives the slot to
// the next server.
func TestStartupRemovalFreesSlot(t *testing.T) {
	rt := start(t, Options{StartupConcurrency: 1}, hangingFirst(exampleServer("s1"))...)
	waitForProcesses(t, 1)
	if err := rt.RemoveServer(t.Context(), "s0"); err != nil {
		t.Fatal(err)
	}
	if st := rt.waitSettled(t, "s1"); st.State != status.Ready {
		t.Fatalf("s1 = %+v", st)
	}
}

// The death of the server actor whose connect holds the one slot gives
// the slot to the next server.
func TestStartupActorDeathFreesSlot(t *testing.T) {
	rt := start(t, Options{StartupConcurrency: 1, Debug: true, Restart: RestartPolicy{Initial: time.Hour}},
		hangingFirst(exampleServer("s1"))...)
	waitForProcesses(t, 1)
	if err := rt.InjectFailure(context.Background(), "manager/s0", "panic"); err != nil {
		t.Fatal(err)
	}
	if st := rt.waitSettled(t, "s1"); st.State != status.Ready {
		t.Fatalf("s1 = %+v", st)
	}
	if st := mustStatus(t, rt, "s0"); st.State != status.Backoff {
		t.Errorf("s0 = %+v, want in backoff after its actor died", st)
	}
}

// A PATCH during a startup turn whose connect fails is undone: s0 goes
// back to its previous config, and that connect holds the turn's slot
// (it never answers), so s1 does not start beside it.
func TestStartupPatchUndoneDuringTurnKeepsSlot(t *testing.T) {
	rt := start(t, Options{StartupConcurrency: 1}, hangingFirst(exampleServer("s1"))...)
	waitForProcesses(t, 1)
	sub := rt.subscribe(t, "s1")
	if _, err := rt.PatchServer(t.Context(), "s0", []byte(`{"command": ["/nonexistent/new-server"]}`)); !errors.Is(err, ErrRestartFailed) {
		t.Fatalf("patch = %v, want ErrRestartFailed", err)
	}
	waitForProcesses(t, 1) // s0 on its previous config again
	s1WaitsForS0(t, rt, sub, "s1 starting beside s0's undone PATCH")
}

// killWaitingS1 kills the actor of s1, which waits for its turn while s0
// holds the one slot, and returns a subscription to s1's events that has
// seen it die.
func killWaitingS1(t *testing.T, rt *testRuntime) *events.Subscription {
	t.Helper()
	waitForProcesses(t, 1)
	sub := rt.subscribe(t, "s1")
	if err := rt.InjectFailure(context.Background(), "manager/s1", "panic"); err != nil {
		t.Fatal(err)
	}
	testutil.AwaitEvent(t, sub, 10*time.Second, "s1's actor dying", func(e events.Event) bool {
		s, ok := e.(events.StateChanged)
		return ok && s.To == string(status.Backoff)
	})
	return sub
}

// A server whose actor dies while it waits for its startup turn is
// respawned at its turn, not by its backoff timer outside the slots.
func TestStartupWaitingActorDeathKeepsTurn(t *testing.T) {
	rt := start(t, Options{StartupConcurrency: 1, Debug: true, Restart: RestartPolicy{Initial: 10 * time.Millisecond}},
		hangingFirst(exampleServer("s1"))...)
	sub := killWaitingS1(t, rt)
	s1WaitsForS0(t, rt, sub, "s1 respawned outside the slots")
}

// A server whose actor cannot be spawned at its turn fails and gives its
// slot up. Only something outside the manager can take a server actor's
// name (the manager spawns one only once the last is gone): here a
// foreign actor does, while s1's died and waits for its turn.
func TestStartupSpawnFailureFreesSlot(t *testing.T) {
	rt := start(t, Options{StartupConcurrency: 1, Debug: true, Restart: RestartPolicy{Initial: time.Hour}},
		hangingFirst(exampleServer("s1"), exampleServer("s2"))...)
	killWaitingS1(t, rt)
	squatter, err := rt.system.Root.SpawnNamed(actor.PropsFromFunc(func(actor.Context) {}), "manager/s1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.system.Root.StopFuture(squatter).Wait() })
	if err := rt.RemoveServer(t.Context(), "s0"); err != nil {
		t.Fatal(err)
	}
	if st := rt.waitSettled(t, "s2"); st.State != status.Ready {
		t.Fatalf("s2 = %+v", st)
	}
	if st := mustStatus(t, rt, "s1"); st.State != status.Failed || !strings.Contains(st.Error, "spawning server actor") {
		t.Errorf("s1 = %+v, want failed on its spawn", st)
	}
}
