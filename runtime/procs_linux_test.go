package runtime

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/internal/procs"
	"github.com/openprogram/mcpvisor/internal/testutil"
)

// shServer runs script under sh -c with the example server's path as $1.
func shServer(name, script string) config.Server {
	s := exampleServer(name)
	s.Command = []string{"sh", "-c", script, "sh", demoBin}
	return s
}

// gone reports whether pid does not exist, not even as a zombie: it was
// reaped.
func gone(pid int) bool { return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) }

// waitForProcess waits for a process of the test's marker whose argv is
// argv, and returns its pid.
func waitForProcess(t *testing.T, argv ...string) int {
	t.Helper()
	found := 0
	testutil.Eventually(t, 30*time.Second, fmt.Sprintf("a process %q", argv), func() bool {
		for _, pid := range testutil.ProcessesWithEnv(testutil.MarkerEnv, marker) {
			if slices.Equal(testutil.Cmdline(pid), argv) {
				found = pid
				return true
			}
		}
		return false
	})
	return found
}

// Issue 10, finding 9: a Shutdown whose context ends before the stop
// sequence could finish still leaves no process of any group behind. The
// server's shell ignores stdin's close and SIGTERM (it waits for a
// grandchild that ignores SIGTERM too), and StopGrace is far longer than
// Shutdown's context.
func TestShutdownKillsEveryGroupWhenItsContextEnds(t *testing.T) {
	rt := start(t, Options{StopGrace: 20 * time.Second},
		shServer("stubborn", `trap "" TERM; sleep 1001 & "$1" serve; wait`))
	pid := readyPID(t, rt, "stubborn")
	sleeper := waitForProcess(t, "sleep", "1001")

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	began := time.Now()
	if err := rt.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown = %v, want the deadline's error (the stop takes two 20s graces)", err)
	}
	if took := time.Since(began); took > 5*time.Second {
		t.Errorf("Shutdown took %v after its context ended", took)
	}
	if left := testutil.LiveInGroup(pid); len(left) > 0 {
		t.Errorf("process group %d still has %v after Shutdown returned", pid, left)
	}
	if testutil.Alive(sleeper) {
		t.Errorf("grandchild %d (ignores SIGTERM) still runs after Shutdown returned", sleeper)
	}
}

// Issue 10, finding 10: a descendant that left the process group (a
// double fork into a new session, as chrome-devtools-mcp does) is killed
// when its server stops, however it stops.
func TestStopKillsDescendantsThatLeftTheGroup(t *testing.T) {
	const script = `(setsid sleep 1000 &); exec "$1" serve`
	for _, tc := range []struct {
		name string
		stop func(t *testing.T, rt *testRuntime)
		// wait: the old session stops in the background of the action.
		wait bool
	}{
		{name: "delete", stop: func(t *testing.T, rt *testRuntime) {
			if a := serve(t, rt.Handler(), jsonRequest(http.MethodDelete, "/api/mcp/servers/forker", "")); a.code != http.StatusNoContent {
				t.Fatalf("DELETE: %d %s", a.code, a.body)
			}
		}},
		{name: "restart", wait: true, stop: func(t *testing.T, rt *testRuntime) {
			if _, err := rt.RestartServer(context.Background(), "forker"); err != nil {
				t.Fatalf("RestartServer: %v", err)
			}
		}},
		{name: "shutdown", stop: func(t *testing.T, rt *testRuntime) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := rt.Shutdown(ctx); err != nil {
				t.Fatalf("Shutdown: %v", err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := start(t, Options{}, shServer("forker", script))
			pid := readyPID(t, rt, "forker")
			sleeper := waitForProcess(t, "sleep", "1000")
			if pgid, _ := syscall.Getpgid(sleeper); pgid == pid {
				t.Fatalf("the sleep is in the server's group %d: the test would not test anything", pid)
			}
			mark := testutil.EnvOf(sleeper, procs.MarkEnv)
			if mark == "" {
				t.Fatalf("the server's descendant carries no %s", procs.MarkEnv)
			}
			tc.stop(t, rt)
			if tc.wait {
				testutil.Eventually(t, 10*time.Second, fmt.Sprintf("the setsid sleep %d to die (%s)", sleeper, tc.name), func() bool { return !testutil.Alive(sleeper) })
			}
			if testutil.Alive(sleeper) {
				t.Errorf("the setsid sleep %d outlived its server (%s)", sleeper, tc.name)
			}
			if left := testutil.ProcessesWithEnv(procs.MarkEnv, mark); len(left) > 0 {
				t.Errorf("processes of the stopped instance left: %v", left)
			}
		})
	}
}

// Issue 10, finding 13: DELETE answers once the process group is gone,
// not while it is still stopping. The server's shell ignores stdin's
// close and SIGTERM, so its stop takes both grace periods.
func TestDeleteAnswersOnceTheProcessGroupIsGone(t *testing.T) {
	rt := start(t, Options{}, shServer("slow", `trap "" TERM; "$1" serve; sleep 1002`))
	pid := readyPID(t, rt, "slow")
	mark := testutil.EnvOf(pid, procs.MarkEnv)
	if mark == "" {
		t.Fatalf("the server carries no %s", procs.MarkEnv)
	}
	if a := serve(t, rt.Handler(), jsonRequest(http.MethodDelete, "/api/mcp/servers/slow", "")); a.code != http.StatusNoContent {
		t.Fatalf("DELETE: %d %s", a.code, a.body)
	}
	if !gone(pid) {
		t.Errorf("pid %d still exists right after DELETE answered", pid)
	}
	if left := testutil.LiveInGroup(pid); len(left) > 0 {
		t.Errorf("process group %d still has %v right after DELETE answered", pid, left)
	}
	if left := testutil.ProcessesWithEnv(procs.MarkEnv, mark); len(left) > 0 {
		t.Errorf("marked processes left right after DELETE answered: %v", left)
	}
}

// A DELETE whose server's processes outlive the stop sequence's bound is
// not answered 204 as if they were gone: it answers 504 with
// ErrProcessesLinger (the removal itself is done). A process of the owner
// that never ends stands for one the kill cannot end (a process in D
// state).
func TestDeleteSaysWhenProcessesOutliveTheBound(t *testing.T) {
	rt := start(t, Options{StopGrace: 100 * time.Millisecond}, exampleServer("stuck"))
	readyPID(t, rt, "stuck")
	phantom := rt.procs.Begin("stuck")
	defer phantom.End()
	a := serve(t, rt.Handler(), jsonRequest(http.MethodDelete, "/api/mcp/servers/stuck", ""))
	if a.code != http.StatusGatewayTimeout || !strings.Contains(string(a.body), "still running") {
		t.Fatalf("DELETE while a process of the server outlives the bound: %d %s, want 504 saying so", a.code, a.body)
	}
	if _, err := rt.Server("stuck"); !errors.Is(err, ErrUnknownServer) {
		t.Fatalf("the server after the DELETE: %v, want it removed all the same", err)
	}
	if !strings.Contains(rt.logs.String(), "still run after the stop sequence's bound") {
		t.Error("no warning logged")
	}
}
