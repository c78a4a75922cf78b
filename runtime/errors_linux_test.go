package runtime

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestErrProcessesLinger: RemoveServer of a server with a process that
// outlives the stop sequence's bound returns ErrProcessesLinger (the
// phantom stands for a process the kill cannot end).
func TestErrProcessesLinger(t *testing.T) {
	rt := start(t, Options{StopGrace: 100 * time.Millisecond}, exampleServer("stuck"))
	readyPID(t, rt, "stuck")
	phantom := rt.procs.Begin("stuck")
	defer phantom.End()
	if err := rt.RemoveServer(context.Background(), "stuck"); !errors.Is(err, ErrProcessesLinger) {
		t.Fatalf("RemoveServer: %v, want it to match ErrProcessesLinger", err)
	}
}
