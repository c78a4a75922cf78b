package procs

import (
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// startTree starts script under sh in a process group of its own; the
// group is killed when the test ends.
func startTree(t *testing.T, script string) int {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	t.Cleanup(func() { _ = syscall.Kill(-pid, syscall.SIGKILL); _ = waitBounded(t, cmd) })
	return pid
}

// await waits, ticking, up to 10 s for cond.
func await(t *testing.T, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	limit := time.After(10 * time.Second)
	for !cond() {
		select {
		case <-tick.C:
		case <-limit:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// A stopped process two levels below the leader (sh → sh → sleep, the
// shape of npx → node) is found through the tree, and only so: with a
// budget of one process the look sees the running leader alone. A
// stopped leader is found at once; a stopped process of another group is
// not counted.
func TestGroupStoppedWalksTheTreeBounded(t *testing.T) {
	leader := startTree(t, `/bin/sh -c 'sleep 100 & kill -STOP $!; wait' & wait`)
	await(t, "the stopped grandchild to be found", func() bool { return GroupStopped(leader) })
	if stoppedInTree(leader, 1) {
		t.Error("with a budget of one process, a stopped grandchild was found: the look is not bounded")
	}
	if state, _, _ := Stat(leader); state == 'T' {
		t.Fatal("the leader itself is stopped")
	}

	other := startTree(t, `sleep 100`)
	if err := syscall.Kill(other, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	await(t, "the other group's leader to stop", func() bool { state, _, _ := Stat(other); return state == 'T' })
	if !stoppedInTree(other, 1) {
		t.Error("a stopped leader was not found with a budget of one")
	}
	calm := startTree(t, `sleep 100 & wait`)
	await(t, "the calm group's child", func() bool { return len(children(calm, 8)) == 1 })
	if GroupStopped(calm) {
		t.Error("a group with no stopped process was found stopped (another group's stopped process counted)")
	}
}
