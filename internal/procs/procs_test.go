//go:build unix

package procs

import (
	"context"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newTracker(t *testing.T) *Tracker {
	t.Helper()
	tr, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// Marks name one instance of one Tracker: two Trackers (two Runtimes in
// one process) never hand out the same mark.
func TestMarksAreUniqueAcrossTrackers(t *testing.T) {
	a, b := newTracker(t), newTracker(t)
	seen := map[string]bool{}
	for _, tr := range []*Tracker{a, b, a, b} {
		p := tr.Begin("x")
		env := p.Env()
		if !strings.HasPrefix(env, MarkEnv+"=") || seen[env] {
			t.Fatalf("mark %q: duplicate or malformed (seen %v)", env, seen)
		}
		seen[env] = true
		p.End()
	}
}

// WaitOwner returns once every process of its owner ended, and only then.
func TestWaitOwner(t *testing.T) {
	tr := newTracker(t)
	p, q, other := tr.Begin("s"), tr.Begin("s"), tr.Begin("other")
	defer other.End()
	p.End()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if tr.WaitOwner(ctx, "s") {
		t.Fatal("WaitOwner returned true while a process of s is accounted for")
	}
	done := make(chan bool, 1)
	go func() { done <- tr.WaitOwner(context.Background(), "s") }()
	q.End()
	q.End() // twice is harmless
	if !<-done {
		t.Fatal("WaitOwner false after every process of s ended")
	}
}

// startGroup starts a sleep in a process group of its own.
func startGroup(t *testing.T, p *Proc) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "1005")
	cmd.Env = []string{p.Env()}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	p.Started(cmd.Process.Pid)
	return cmd
}

// KillAll kills every live group at once, and a group started after it as
// soon as it is Started.
func TestKillAll(t *testing.T) {
	tr := newTracker(t)
	before := startGroup(t, tr.Begin("a"))
	tr.KillAll(time.Second)
	if err := before.Wait(); err == nil {
		t.Fatal("a group live at KillAll exited normally, want killed")
	}
	after := startGroup(t, tr.Begin("b"))
	if err := after.Wait(); err == nil {
		t.Fatal("a group started after KillAll exited normally, want killed")
	}
}
