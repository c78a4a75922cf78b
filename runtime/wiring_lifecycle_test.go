package runtime

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

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

// nothingAfterRemoved checks that what sub holds has a ServerRemoved and
// nothing after it.
func nothingAfterRemoved(t *testing.T, sub *events.Subscription) {
	t.Helper()
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
	nothingAfterRemoved(t, sub)
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

// A server whose actor cannot be spawned (its name taken in the actor
// registry) shows failed (connect_failed) at once, and a restart of it is
// answered with the error instead of waiting for an actor that does not
// exist.
func TestServerActorSpawnFailureShowsFailed(t *testing.T) {
	rt := start(t, Options{})
	squatter, err := rt.system.Root.SpawnNamed(actor.PropsFromFunc(func(actor.Context) {}), "manager/ex")
	if err != nil {
		t.Fatal(err)
	}
	defer rt.system.Root.Stop(squatter)
	sub := rt.subscribe(t, "ex")
	if _, err := rt.AddServer(t.Context(), exampleServer("ex")); err != nil {
		t.Fatal(err)
	}
	sc := testutil.Await(t, sub, 10*time.Second, "failed", func(e events.StateChanged) bool { return e.To != "starting" })
	if sc.To != "failed" || sc.ErrorKind != "connect_failed" || !strings.Contains(sc.Error, "spawning server actor") {
		t.Errorf("state %s, want failed (connect_failed) naming the spawn", sc)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if _, err := rt.RestartServer(ctx, "ex"); err == nil || !strings.Contains(err.Error(), "spawning server actor") {
		t.Errorf("restart answered %v, want the spawn error", err)
	}
}
