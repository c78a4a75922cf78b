package runtime

import (
	"strings"
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/testutil"
)

// lateStderrServer is a stdio server that writes a stderr line when its
// process group gets SIGTERM, a grace after its stdin closed: a line of a
// connection that is already being stopped.
func lateStderrServer(name string) config.Server {
	srv := exampleServer(name)
	srv.Command = []string{"/bin/sh", "-c",
		`"$0" serve; trap 'echo late-line-after-stop >&2; exit 0' TERM; sleep 30 & wait`, demoBin}
	return srv
}

// The gate of an incarnation that panicked is closed when it dies: its
// connection's late stderr line does not follow a later ServerRemoved.
func TestDeadIncarnationSaysNothingAfterServerRemoved(t *testing.T) {
	rt := start(t, Options{Debug: true, Restart: RestartPolicy{Initial: 10 * time.Millisecond}}, lateStderrServer("ex"))
	rt.waitReady(t, "ex")
	sub := rt.subscribe(t, "ex")
	if err := rt.InjectFailure(t.Context(), "manager/ex", "panic"); err != nil {
		t.Fatal(err)
	}
	testutil.Await[events.ActorPanicked](t, sub, 10*time.Second, "the panic", nil)
	testutil.Await(t, sub, 10*time.Second, "ready again", func(e events.StateChanged) bool { return e.To == "ready" })
	// Removed while the first incarnation's process still waits for its
	// SIGTERM; the removal returns once every process of it is gone.
	if err := rt.RemoveServer(t.Context(), "ex"); err != nil {
		t.Fatal(err)
	}
	nothingAfterRemoved(t, sub)
	if strings.Contains(rt.logs.String(), "late-line-after-stop") {
		t.Errorf("a removed server's stderr line reached the log")
	}
}
