package runtime

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/internal/testutil"
)

// A stdio server stopped with SIGSTOP (its whole group) is declared lost
// within two intervals, its process group is killed (SIGKILL ends stopped
// processes), the call it held fails at once instead of holding up the
// session's end, and it is restarted through the backoff, ready again.
func TestKeepAliveRestartsAStoppedServer(t *testing.T) {
	rt := start(t, keepAliveOptions(), exampleServer("ka"))
	pid := readyPID(t, rt, "ka")
	sub := rt.subscribe(t, "ka")
	held := callInFlight(rt, "ka__sleep")
	waitForStderr(t, rt, "sleeping 60000ms")
	if err := syscall.Kill(-pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	st := awaitUnresponsive(t, rt, sub, "ka", time.Now())
	select {
	case err := <-held:
		if !errorsIsUnresponsive(err) {
			t.Errorf("the call in flight: %v, want ErrSessionClosed and ErrUnresponsive", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the call in flight did not end with the session")
	}
	if left := testutil.LiveInGroup(pid); len(left) > 0 || st.PID == pid {
		t.Errorf("old group %d has %v; new PID %d", pid, left, st.PID)
	}
	mustCall(t, rt, "ka__echo", map[string]any{"text": "back"})
}

// errorsIsUnresponsive: a call in flight when the session was ended says
// so (ErrSessionClosed and ErrUnresponsive).
func errorsIsUnresponsive(err error) bool {
	return errors.Is(err, ErrSessionClosed) && errors.Is(err, ErrUnresponsive)
}

// callInFlight starts a long call of tool and returns where its error
// arrives.
func callInFlight(rt *testRuntime, tool string) <-chan error {
	errc := make(chan error, 1)
	go func() {
		_, err := rt.CallTool(context.Background(), tool, map[string]any{"ms": 60_000})
		errc <- err
	}()
	return errc
}
