package mcpconn

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/testutil"
)

// TestSilentSubscribeDoesNotFailDial: a server that never answers
// resources/subscribe (2025-11-25), for more wanted URIs than are asked
// at a time, still gets its session: the wanted URIs are subscribed once
// the session is up, in the background, and Close stops that (the
// requests in flight are cancelled, the server sees each cancellation).
func TestSilentSubscribeDoesNotFailDial(t *testing.T) {
	entered := make(chan string, 64)
	never := make(chan struct{})
	ct, _ := subscribeServer(t, "2025-11-25", entered, never)
	var uris wanted
	for i := range 3 * maxResubscribes {
		uris = append(uris, fmt.Sprintf("mem://%d", i))
	}
	conn, err := testDial(t.Context(), Options{
		Server:    config.Server{Name: "s", Type: config.TypeLocal, Command: []string{"unused"}, Enabled: true, TimeoutSeconds: 1},
		Transport: ct,
		Features:  Features{Subscriptions: uris},
	})
	if err != nil {
		t.Fatalf("Dial with subscribes the server never answers: %v", err)
	}
	// They are asked concurrently, each within its own bound.
	for range maxResubscribes {
		select {
		case <-entered:
		case <-time.After(5 * time.Second):
			t.Fatal("the wanted URIs were not subscribed")
		}
	}
	closed := make(chan struct{})
	go func() { conn.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close waited for subscribes the server never answers")
	}
}

// TestUpdateThrottleCoalesces: a URI's first update is an event at once;
// a flood after it is one event, the last, when the interval ends; a
// quiet interval makes the URI quiet again; other URIs are not held back.
func TestUpdateThrottleCoalesces(t *testing.T) {
	clock := clockwork.NewFakeClock()
	got := make(chan events.ResourceUpdated, 16)
	th := newUpdateThrottle(clock, func(e events.Event) { got <- e.(events.ResourceUpdated) }, nil)
	defer th.close()
	update := func(uri string, n int) events.ResourceUpdated {
		return events.ResourceUpdated{Header: events.Header{Server: fmt.Sprint(n)}, URI: uri}
	}
	next := func(what string) events.ResourceUpdated {
		t.Helper()
		select {
		case e := <-got:
			return e
		case <-time.After(5 * time.Second):
			t.Fatalf("no event: %s", what)
			return events.ResourceUpdated{}
		}
	}
	none := func(what string) {
		t.Helper()
		select {
		case e := <-got:
			t.Fatalf("%s: got %+v", what, e)
		default:
		}
	}
	for i := range 5000 {
		th.offer("mem://a", update("mem://a", i))
	}
	if e := next("first update"); e.Server != "0" {
		t.Fatalf("first event is update %s, want 0", e.Server)
	}
	th.offer("mem://b", update("mem://b", 0))
	if e := next("another URI"); e.URI != "mem://b" {
		t.Fatalf("got %+v, want mem://b's first update at once", e)
	}
	none("within the interval")
	if err := clock.BlockUntilContext(t.Context(), 2); err != nil {
		t.Fatal(err)
	}
	clock.Advance(UpdateInterval)
	if e := next("end of the interval"); e.URI != "mem://a" || e.Server != "4999" {
		t.Fatalf("got %+v, want mem://a's last update", e)
	}
	none("after the coalesced one")
	// mem://b was quiet, and mem://a is quiet through its next interval:
	// both are quiet again.
	if err := clock.BlockUntilContext(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	clock.Advance(UpdateInterval)
	if err := clock.BlockUntilContext(t.Context(), 0); err != nil {
		t.Fatal(err)
	}
	none("quiet interval")
	th.offer("mem://a", update("mem://a", 1))
	if e := next("update of a quiet URI"); e.Server != "1" {
		t.Fatalf("got %+v, want the update at once", e)
	}
}

// TestUpdateThrottleDropsUnwanted: an update coalesced within the
// interval is not emitted at its end if the host stopped wanting the URI
// meanwhile (no event after the last subscription ended).
func TestUpdateThrottleDropsUnwanted(t *testing.T) {
	clock := clockwork.NewFakeClock()
	got := make(chan events.ResourceUpdated, 16)
	var wanted atomic.Bool
	wanted.Store(true)
	th := newUpdateThrottle(clock, func(e events.Event) { got <- e.(events.ResourceUpdated) }, func(string) bool { return wanted.Load() })
	defer th.close()
	th.offer("mem://a", events.ResourceUpdated{URI: "mem://a"})
	th.offer("mem://a", events.ResourceUpdated{URI: "mem://a"}) // coalesced
	if e := <-got; e.URI != "mem://a" {
		t.Fatalf("first event %+v", e)
	}
	wanted.Store(false) // the last subscription ended
	if err := clock.BlockUntilContext(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	clock.Advance(UpdateInterval)
	// The tick ends with the URI quiet (its entry gone) or, wrongly, with
	// the update emitted.
	testutil.Eventually(t, 5*time.Second, "the end of the interval", func() bool {
		th.mu.Lock()
		defer th.mu.Unlock()
		return th.uris["mem://a"] == nil || len(got) > 0
	})
	select {
	case e := <-got:
		t.Fatalf("the coalesced update of an unwanted URI was emitted: %+v", e)
	default:
	}
}
