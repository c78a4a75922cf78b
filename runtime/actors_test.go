package runtime

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/status"
)

// A server actor stopped from outside (V2) takes its tools and process
// with it at once, and comes back after the backoff with a fresh session;
// a removal meanwhile keeps it away.
func TestKilledServerActorRecovers(t *testing.T) {
	rt := start(t, Options{StopGrace: 200 * time.Millisecond}, exampleServer("ex"))
	first := rt.waitSettled(t, "ex")
	rt.system.Root.Stop(actor.NewPID(rt.system.Address(), "manager/ex"))
	deadline := time.Now().Add(20 * time.Second)
	sawGone := false
	for {
		st, _ := rt.board.Get("ex")
		if len(rt.Tools()) == 0 && st.PID == 0 {
			sawGone = true
		}
		if st.State == status.Ready && st.PID != first.PID && len(rt.Tools()) > 0 {
			if st.Restarts < 1 {
				t.Fatalf("respawned status = %+v, want restarts >= 1", st)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not recovered: %+v", st)
		}
		time.Sleep(2 * time.Millisecond)
	}
	if !sawGone {
		t.Error("never saw the server without tools and pid between the kill and the respawn")
	}
	for len(testutil.ProcessesWithMarker(marker)) != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("processes %v, want only the new one", testutil.ProcessesWithMarker(marker))
		}
		time.Sleep(5 * time.Millisecond)
	}
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
	rt.system.Root.Stop(actor.NewPID(rt.system.Address(), "manager/ex/session"))
	deadline := time.Now().Add(20 * time.Second)
	for {
		st, _ := rt.board.Get("ex")
		if st.State == status.Ready && st.PID != first.PID && len(rt.Tools()) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not recovered: %+v", st)
		}
		time.Sleep(5 * time.Millisecond)
	}
	for {
		left := testutil.ProcessesWithMarker(marker)
		if len(left) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes %v, want only the new one", left)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
