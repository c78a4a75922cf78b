package runtime

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/testutil"
)

// buffered returns what sub holds now, without waiting for more.
func buffered(t *testing.T, sub *events.Subscription) []events.Event {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // Next returns what is buffered first
	var out []events.Event
	for {
		e, err := sub.Next(ctx)
		if err != nil {
			return out
		}
		if _, ok := e.(events.Dropped); ok {
			t.Fatalf("the subscription dropped events: %s", e)
		}
		out = append(out, e)
	}
}

// Nothing of a removed server follows its ServerRemoved: not its actor's
// "stopped" nor its listings going to zero. A consumer rebuilding status
// from the stream would otherwise bring the server back.
func TestNothingFollowsServerRemoved(t *testing.T) {
	rt := start(t, Options{}, exampleServer("ex"))
	rt.waitReady(t, "ex")
	sub := rt.subscribe(t, "ex")
	if err := rt.RemoveServer(context.Background(), "ex"); err != nil {
		t.Fatal(err)
	}
	removed := false
	for _, e := range buffered(t, sub) {
		if _, ok := e.(events.ServerRemoved); ok {
			removed = true
		} else if removed {
			t.Errorf("after server_removed: %s", e)
		}
	}
	if !removed {
		t.Errorf("no server_removed")
	}
}

// A server actor that panics is shown as the manager decides (backoff),
// with no "stopped" of the dead actor in between.
func TestPanickedServerShowsNoStopped(t *testing.T) {
	rt := start(t, Options{Debug: true, Restart: RestartPolicy{Initial: 50 * time.Millisecond}}, exampleServer("ex"))
	rt.waitReady(t, "ex")
	sub := rt.subscribe(t, "ex")
	if err := rt.InjectFailure(t.Context(), "manager/ex", "panic"); err != nil {
		t.Fatal(err)
	}
	var states []string
	testutil.Await(t, sub, 10*time.Second, "backoff", func(e events.StateChanged) bool {
		states = append(states, e.From+"->"+e.To)
		return e.To == "backoff"
	})
	if len(states) != 1 || states[0] != "ready->backoff" {
		t.Errorf("states after the panic: %v, want [ready->backoff]", states)
	}
	rt.waitReady(t, "ex")
}

// Enabling a disabled server shows disabled -> starting once: the
// manager's and the actor's "starting" are one event.
func TestEnableShowsStartingOnce(t *testing.T) {
	srv := exampleServer("ex")
	srv.Enabled = false
	rt := start(t, Options{}, srv)
	rt.waitState(t, "ex", "disabled")
	sub := rt.subscribe(t, "ex")
	if _, err := rt.PatchServer(t.Context(), "ex", []byte(`{"enabled":true}`)); err != nil {
		t.Fatal(err)
	}
	var states []string
	testutil.Await(t, sub, 10*time.Second, "ready", func(sc events.StateChanged) bool {
		states = append(states, sc.From+"->"+sc.To)
		return sc.To == "ready"
	})
	if want := []string{"disabled->starting", "starting->ready"}; !slices.Equal(states, want) {
		t.Errorf("states of the enable: %v, want %v", states, want)
	}
}
