package procs

import (
	"testing"
	"time"
)

// A KillAll while a start is in flight (the leader runs and carries the
// mark, its group is not recorded yet) kills the leader but leaves its
// reaping, and its exit status, to os/exec, subreaper or not.
func TestKillAllDuringStartLeavesTheLeaderToOSExec(t *testing.T) {
	tr, err := New(Options{Subreaper: true})
	if err != nil {
		t.Fatal(err)
	}
	p := tr.Begin("a")
	defer p.End()
	p.Starting()
	cmd := startMarked(t, p, "1006")
	tr.KillAll(2 * time.Second)
	p.Started(cmd.Process.Pid)
	if err := waitBounded(t, cmd); !killedBySIGKILL(err) {
		t.Fatalf("the leader's Wait: %v, want os/exec's report of a SIGKILL", err)
	}
}
