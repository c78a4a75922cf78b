package runtime

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/status"
)

// subscribe subscribes to name's events (every server's when name is
// empty) for the rest of the test, with room for a burst of server logs.
func (rt *testRuntime) subscribe(t testing.TB, name string) *events.Subscription {
	sub := rt.Subscribe(events.SubscribeOptions{Server: name, Buffer: 1 << 14})
	t.Cleanup(sub.Close)
	return sub
}

// awaitServer waits, for up to within, until name reaches a state that
// ok accepts (testutil.AwaitState) and returns its status then.
func (rt *testRuntime) awaitServer(t testing.TB, name string, within time.Duration, what string, ok func(s status.State, restarts int) bool) status.Server {
	t.Helper()
	sub := rt.Subscribe(events.SubscribeOptions{Server: name, Buffer: 1 << 14})
	defer sub.Close()
	now, _ := rt.board.Get(name)
	testutil.AwaitState(t, sub, within, name+" "+what, now, ok)
	st, _ := rt.board.Get(name)
	return st
}

// waitFor waits until server name is in one of states and returns it.
func (rt *testRuntime) waitFor(t testing.TB, name string, states ...status.State) status.Server {
	t.Helper()
	return rt.awaitServer(t, name, 30*time.Second, fmt.Sprintf("in %v", states), func(s status.State, _ int) bool {
		return slices.Contains(states, s)
	})
}

// waitState waits until server name is in state, for up to 10 s: for a
// state a test means to catch as it passes (starting, authorizing).
func (rt *testRuntime) waitState(t testing.TB, name string, state status.State) {
	t.Helper()
	rt.awaitServer(t, name, 10*time.Second, "in "+string(state), func(s status.State, _ int) bool { return s == state })
}

// waitReady waits until name is ready with its tools registered.
func (rt *testRuntime) waitReady(t testing.TB, name string) status.Server {
	t.Helper()
	return rt.waitFor(t, name, status.Ready)
}

// waitSettled waits until server leaves "starting" and returns its status.
func (rt *testRuntime) waitSettled(t testing.TB, name string) status.Server {
	t.Helper()
	return rt.awaitServer(t, name, 30*time.Second, "settled (out of starting)", func(s status.State, _ int) bool { return s != status.Starting })
}

// waitBack waits until name is ready again after losing a session, and
// returns its status.
func (rt *testRuntime) waitBack(t testing.TB, name string) status.Server {
	t.Helper()
	return rt.awaitServer(t, name, 30*time.Second, "ready again after a restart", func(s status.State, restarts int) bool {
		return s == status.Ready && restarts > 0
	})
}

// awaitCatalog waits until cond (about name's tools or prompts) holds: it
// checks it now and after each of name's ToolsChanged and PromptsChanged,
// which are emitted just after the registries changed.
func (rt *testRuntime) awaitCatalog(t testing.TB, name, what string, cond func() bool) {
	t.Helper()
	sub := rt.Subscribe(events.SubscribeOptions{Server: name, Buffer: 1 << 14})
	defer sub.Close()
	if cond() {
		return
	}
	testutil.AwaitEvent(t, sub, 10*time.Second, what, func(e events.Event) bool {
		switch e.(type) {
		case events.ToolsChanged, events.PromptsChanged:
			return cond()
		}
		return false
	})
}

// readyPID waits for name to be ready and returns its process id.
func readyPID(t *testing.T, rt *testRuntime, name string) int {
	t.Helper()
	st := rt.waitSettled(t, name)
	if st.State != status.Ready || st.PID == 0 {
		t.Fatalf("%s = %+v", name, st)
	}
	return st.PID
}
