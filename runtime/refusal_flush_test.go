package runtime

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/loggate"
	"github.com/openprogram/mcpvisor/internal/testutil"
)

// refusalsSaid sums what RequestRefused events among evs say: one for
// each with a method, plus every count held back.
func refusalsSaid(evs []events.Event, server string) (said int) {
	for _, e := range evs {
		if r, ok := e.(events.RequestRefused); ok && r.Server == server {
			if r.Method != "" {
				said++
			}
			said += r.Suppressed
		}
	}
	return said
}

// A flood of refusals that stops is said in full a second later, while
// the server lives: the stream, rebuilt, counts what the board counts.
func TestHeldRefusalsAreSaidWhenTheFloodStops(t *testing.T) {
	fc := clockwork.NewFakeClockAt(time.Unix(1_000_000, 0))
	board, bus := gateBus(fc.Now, slog.New(slog.DiscardHandler))
	defer bus.Close()
	sub := bus.Subscribe(events.SubscribeOptions{Buffer: 1 << 12})
	defer sub.Close()
	g := newRequestGate(ServerRequestLimits{MaxBytes: 1}, bus, fc)
	const flood = loggate.Burst + 400
	for range flood {
		if _, err := g.admit("a", "sampling/createMessage", "too large"); err == nil {
			t.Fatal("a request over MaxBytes went through")
		}
	}
	waitTimers(t, fc, 1) // the held-back count is due
	fc.Advance(time.Second)
	var seen []events.Event
	testutil.AwaitEvent(t, sub, 10*time.Second, "the held-back count", func(e events.Event) bool {
		seen = append(seen, e)
		r, ok := e.(events.RequestRefused)
		return ok && r.Method == ""
	})
	st, _ := board.Get("a")
	if said := refusalsSaid(seen, "a"); st.RequestsRefused != flood || said != flood {
		t.Errorf("the stream says %d refusals, the board counts %d; want %d both", said, st.RequestsRefused, flood)
	}
	noTimers(t, fc)
}

// A removed server's held-back refusals are said before its
// ServerRemoved, and a server added again under its name, before the old
// one's processes are gone, starts afresh: its first refusal holds no
// count of the old one's, and nothing of the old one comes between the
// removal and the new ServerAdded.
func TestReaddedServerStartsItsRefusalsAfresh(t *testing.T) {
	opts := Options{Sample: func(context.Context, SamplingRequest) (SamplingResult, error) { return SamplingResult{}, nil },
		ServerRequests: ServerRequestLimits{MaxBytes: 1}}
	fc := fakeClock(&opts)
	rt := start(t, opts, lateStderrServer("a"))
	rt.waitReady(t, "a")
	sub := rt.subscribe(t, "a")
	refuse := func() {
		if _, err := rt.gate.admit("a", "sampling/createMessage", "too large"); err == nil {
			t.Fatal("a request over MaxBytes went through")
		}
	}
	for range loggate.Burst + 50 {
		refuse()
	}
	removed := make(chan error, 1)
	go func() { removed <- rt.RemoveServer(context.Background(), "a") }()
	testutil.Await[events.ServerRemoved](t, sub, 10*time.Second, "server removed", nil)
	refuse() // the old connection asks again: refused, not counted
	if _, err := rt.AddServer(t.Context(), lateStderrServer("a")); err != nil {
		t.Fatal(err)
	}
	if err := <-removed; err != nil {
		t.Fatal(err)
	}
	rt.waitReady(t, "a")
	fc.Advance(time.Second)
	refuse()
	st := mustStatus(t, rt, "a")
	if st.RequestsRefused != 1 {
		t.Errorf("the new server counts %d refusals, want 1", st.RequestsRefused)
	}
	var between []string
	state := "before"
	for _, e := range buffered(t, sub) {
		switch e := e.(type) {
		case events.ServerRemoved:
			state = "removed"
		case events.ServerAdded:
			state = "added"
		case events.RequestRefused:
			if state == "added" && e.Method != "" && e.Suppressed != 0 {
				t.Errorf("the new server's first refusal says %d held back, want 0", e.Suppressed)
			}
		}
		if state == "removed" {
			if _, ok := e.(events.ServerRemoved); !ok {
				between = append(between, e.String())
			}
		}
	}
	if state != "added" || len(between) > 0 {
		t.Errorf("between server_removed and server_added: %q (last seen: %s)", between, state)
	}
}
