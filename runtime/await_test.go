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
	sub := rt.bus.Subscribe(events.SubscribeOptions{Server: name, Buffer: 1 << 14})
	t.Cleanup(sub.Close)
	return sub
}

// awaitServer waits, for up to within, until name reaches a state that
// ok accepts (given the restarts the board counted), and returns its
// status. It looks at the board once and then at name's StateChanged
// events, so that a state that comes and goes is not missed; a ready
// state counts once its tools are registered (the ToolsChanged that
// follows it: ready is shown first), since a test that waits for ready
// then calls them. A server with no tools is never ready to it.
func (rt *testRuntime) awaitServer(t testing.TB, name string, within time.Duration, what string, ok func(s status.State, restarts int) bool) status.Server {
	t.Helper()
	sub := rt.bus.Subscribe(events.SubscribeOptions{Server: name, Buffer: 1 << 14})
	defer sub.Close()
	st, _ := rt.board.Get(name)
	state, restarts, tools := st.State, st.Restarts, st.ToolCount > 0
	done := func() bool { return state != "" && ok(state, restarts) && (state != status.Ready || tools) }
	if done() {
		return st
	}
	testutil.AwaitEvent(t, sub, within, name+" "+what, func(e events.Event) bool {
		switch e := e.(type) {
		case events.StateChanged:
			state, restarts = status.State(e.To), e.Restarts
			tools = tools && state == status.Ready
		case events.ToolsChanged:
			tools = e.Count > 0
		case events.ServerRemoved:
			state = ""
		default:
			return false
		}
		return done()
	})
	st, _ = rt.board.Get(name)
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
