package runtime

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/status"
)

// A server actor stopped from outside (V2) takes its tools and process
// with it at once, and comes back after the backoff with a fresh session;
// a removal meanwhile keeps it away.
func TestKilledServerActorRecovers(t *testing.T) {
	rt := start(t, Options{StopGrace: 200 * time.Millisecond}, exampleServer("ex"))
	first := rt.waitSettled(t, "ex")
	sub := rt.subscribe(t, "ex")
	rt.system.Root.Stop(actor.NewPID(rt.system.Address(), "manager/ex"))
	// Gone at once: the tools withdrawn, then a state that shows no pid,
	// before anything starts again.
	testutil.Await(t, sub, 20*time.Second, "ex's tools withdrawn", func(e events.ToolsChanged) bool { return e.Count == 0 })
	if e := testutil.Await[events.StateChanged](t, sub, 20*time.Second, "ex out of ready", nil); e.From != string(status.Ready) || e.To == string(status.Starting) {
		t.Errorf("after the tools went: %v, want a move from ready to a state without a pid", e)
	}
	st := rt.waitFor(t, "ex", status.Ready)
	if st.PID == first.PID || st.Restarts < 1 {
		t.Fatalf("respawned status = %+v, want a new pid and restarts >= 1", st)
	}
	testutil.Eventually(t, 20*time.Second, "only the new process", func() bool { return len(testutil.ProcessesWithMarker(marker)) == 1 })
}

// A server actor killed while its server is being removed is not
// respawned.
func TestKilledServerActorNotRespawnedAfterRemove(t *testing.T) {
	opts := Options{StopGrace: 200 * time.Millisecond}
	clock := fakeClock(&opts)
	rt := start(t, opts, exampleServer("ex"))
	rt.waitSettled(t, "ex")
	rt.system.Root.Stop(actor.NewPID(rt.system.Address(), "manager/ex"))
	rt.waitState(t, "ex", status.Backoff)
	waitTimers(t, clock, 1) // the respawn
	if err := rt.RemoveServer(context.Background(), "ex"); err != nil {
		t.Fatal(err)
	}
	noTimers(t, clock) // the respawn is off
	clock.Advance(time.Hour)
	rt.settle(t, "manager")
	if _, err := rt.Server("ex"); !errors.Is(err, ErrUnknownServer) {
		t.Fatalf("removed server came back: %v", err)
	}
	if left := testutil.ProcessesWithMarker(marker); len(left) > 0 {
		t.Fatalf("processes %v after removal", left)
	}
}

// A session actor stopped from outside is replaced after the backoff, on a
// new process; the old process is gone.
func TestKilledSessionActorRecovers(t *testing.T) {
	rt := start(t, Options{StopGrace: 200 * time.Millisecond}, exampleServer("ex"))
	first := rt.waitSettled(t, "ex")
	sub := rt.subscribe(t, "ex")
	rt.system.Root.Stop(actor.NewPID(rt.system.Address(), "manager/ex/session"))
	started := testutil.Await(t, sub, 20*time.Second, "a new session", func(e events.SessionStarted) bool { return e.PID != first.PID })
	if st := rt.waitFor(t, "ex", status.Ready); st.PID != started.PID || len(rt.Tools()) == 0 {
		t.Fatalf("not recovered on pid %d: %+v (%d tools)", started.PID, st, len(rt.Tools()))
	}
	testutil.Eventually(t, 20*time.Second, "only the new process", func() bool { return len(testutil.ProcessesWithMarker(marker)) == 1 })
}
