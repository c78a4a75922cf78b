//go:build unix

package procs

import (
	"context"
	"errors"
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

// startGroup starts a sleep in a process group of its own and records it.
func startGroup(t *testing.T, p *Proc) *exec.Cmd {
	t.Helper()
	cmd := startMarked(t, p, "1005")
	p.Started(cmd.Process.Pid)
	return cmd
}

// startMarked starts a sleep of secs with p's mark in a process group of
// its own, without recording it.
func startMarked(t *testing.T, p *Proc, secs string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", secs)
	cmd.Env = []string{p.Env()}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = waitBounded(t, cmd) })
	return cmd
}

// waitBounded waits for cmd, failing the test if it runs on for 10s.
func waitBounded(t *testing.T, cmd *exec.Cmd) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := time.NewTimer(10 * time.Second)
	defer timer.Stop()
	select {
	case err := <-done:
		return err
	case <-timer.C:
		_ = cmd.Process.Kill()
		t.Errorf("%v still runs after 10s", cmd.Args)
		return <-done
	}
}

// killedBySIGKILL reports whether err is os/exec's report of a process
// that SIGKILL ended: os/exec reaped it, nobody else took its status.
func killedBySIGKILL(err error) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

// KillAll kills every live group at once, and a group started after it as
// soon as it is Started.
func TestKillAll(t *testing.T) {
	tr := newTracker(t)
	before := startGroup(t, tr.Begin("a"))
	tr.KillAll(time.Second)
	if err := waitBounded(t, before); !killedBySIGKILL(err) {
		t.Fatalf("a group live at KillAll: %v, want killed", err)
	}
	after := startGroup(t, tr.Begin("b"))
	if err := waitBounded(t, after); !killedBySIGKILL(err) {
		t.Fatalf("a group started after KillAll: %v, want killed", err)
	}
}
