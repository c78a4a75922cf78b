package runtime

import (
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/status"
)

// Stopping a server actor from outside leaves no process and no tool, and
// the status says the server is down. (A stopped session is recovered:
// TestKilledSessionActorRecovers.)
func TestKilledActorsLeaveNothing(t *testing.T) {
	for _, path := range []string{"manager/ex"} {
		t.Run(path, func(t *testing.T) {
			rt := start(t, Options{StopGrace: 200 * time.Millisecond}, exampleServer("ex"))
			rt.waitSettled(t, "ex")
			if len(rt.Tools()) == 0 || len(testutil.ProcessesWithMarker(marker)) != 1 {
				t.Fatalf("not ready: %+v", rt.Status())
			}
			pid := actor.NewPID(rt.system.Address(), path)
			rt.system.Root.Stop(pid)

			deadline := time.Now().Add(10 * time.Second)
			for len(rt.Tools()) > 0 || len(testutil.ProcessesWithMarker(marker)) > 0 {
				if time.Now().After(deadline) {
					t.Fatalf("after stopping %s: %d tools, processes %v", path, len(rt.Tools()), testutil.ProcessesWithMarker(marker))
				}
				time.Sleep(5 * time.Millisecond)
			}
			for {
				st, _ := rt.board.Get("ex")
				if st.State == status.Failed && st.ErrorKind == status.KindSessionLost && !st.Ready {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("status after stopping %s = %+v, want failed/session_lost", path, st)
				}
				time.Sleep(5 * time.Millisecond)
			}
		})
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
