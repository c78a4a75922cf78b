package runtime

import (
	"context"
	"errors"
	"testing"

	"github.com/openprogram/mcpvisor/events"
)

// nextEvent reads sub's next event within eventsWait.
func nextAny(t *testing.T, sub *events.Subscription) events.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), eventsWait)
	defer cancel()
	e, err := sub.Next(ctx)
	if err != nil {
		t.Fatalf("waiting for an event: %v", err)
	}
	return e
}

// TestSubscribe: live with a server filter, from a sequence number, and
// ended by Shutdown after what was emitted before it.
func TestSubscribe(t *testing.T) {
	rt := start(t, Options{})
	if rt.Boot() == "" || rt.Boot() == start(t, Options{}).Boot() {
		t.Fatalf("boot %q: want a different id for each Runtime", rt.Boot())
	}
	live := rt.Subscribe(events.SubscribeOptions{Server: "fs"})
	defer live.Close()
	gh := fsReady
	gh.Server = "gh"
	rt.bus.Emit(gh)
	rt.bus.Emit(fsStarted)
	if e, ok := nextAny(t, live).(events.SessionStarted); !ok || e.Server != "fs" || e.PID != 4242 {
		t.Errorf("live: got %v, want fs's session started", e)
	}

	from := rt.Subscribe(events.SubscribeOptions{From: rt.bus.LastSeq() - 1})
	defer from.Close()
	if e := nextAny(t, from); e.Type() != events.TypeStateChanged || e.Head().Server != "gh" {
		t.Errorf("from: got %v, want gh's state change first", e)
	}

	rt.bus.Emit(fsReady)
	ctx, cancel := context.WithTimeout(context.Background(), eventsWait)
	defer cancel()
	if err := rt.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if e := nextAny(t, live); e.Type() != events.TypeStateChanged {
		t.Errorf("after Shutdown: got %v, want what was emitted before", e)
	}
	if _, err := live.Next(ctx); !errors.Is(err, events.ErrClosed) {
		t.Errorf("after Shutdown and the last event: %v, want events.ErrClosed", err)
	}
	if _, err := rt.Subscribe(events.SubscribeOptions{}).Next(ctx); !errors.Is(err, events.ErrClosed) {
		t.Errorf("Subscribe after Shutdown: %v, want events.ErrClosed", err)
	}
}
