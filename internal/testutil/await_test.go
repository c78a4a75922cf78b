package testutil

import (
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/events"
)

// fakeTB records the failure of a helper under test; Fatalf ends the
// goroutine, as testing's does.
type fakeTB struct {
	testing.TB
	failed string
}

func (f *fakeTB) Helper() {}

func (f *fakeTB) Fatalf(format string, args ...any) {
	f.failed = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// run calls body with a fakeTB on its own goroutine and returns what it
// failed with ("" when it did not).
func run(t *testing.T, body func(tb testing.TB)) string {
	f := &fakeTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		body(f)
	}()
	<-done
	return f.failed
}

func state(name, to string) events.Event {
	return events.StateChanged{Header: events.Header{Server: name}, To: to}
}

func TestAwaitEventSkipsToTheMatch(t *testing.T) {
	bus := events.NewBus(nil)
	defer bus.Close()
	sub := bus.Subscribe(events.SubscribeOptions{})
	bus.Emit(state("ex", "starting"))
	bus.Emit(events.ToolsChanged{Header: events.Header{Server: "ex"}, Count: 2})
	go bus.Emit(state("ex", "ready"))
	got := Await(t, sub, 10*time.Second, "ex ready", func(e events.StateChanged) bool { return e.To == "ready" })
	if got.To != "ready" || got.Seq != 3 {
		t.Fatalf("got %v, want the third event, ex ready", got)
	}
}

func TestAwaitEventTimesOutSayingWhatItSaw(t *testing.T) {
	bus := events.NewBus(nil)
	defer bus.Close()
	sub := bus.Subscribe(events.SubscribeOptions{})
	bus.Emit(state("ex", "starting"))
	msg := run(t, func(tb testing.TB) {
		AwaitEvent(tb, sub, 50*time.Millisecond, "ex ready", func(e events.Event) bool { return false })
	})
	if !strings.Contains(msg, "timed out") || !strings.Contains(msg, "ex ready") || !strings.Contains(msg, "starting") {
		t.Fatalf("failure %q does not name the wait and the event seen", msg)
	}
}

func TestAwaitEventFailsOnDropped(t *testing.T) {
	bus := events.NewBus(nil)
	defer bus.Close()
	sub := bus.Subscribe(events.SubscribeOptions{Buffer: 1})
	for range 3 {
		bus.Emit(state("ex", "starting"))
	}
	bus.Emit(state("ex", "ready")) // lost behind the full buffer
	msg := run(t, func(tb testing.TB) {
		Await(tb, sub, 10*time.Second, "ex ready", func(e events.StateChanged) bool { return e.To == "ready" })
	})
	if !strings.Contains(msg, "dropped") {
		t.Fatalf("failure %q does not say events were dropped", msg)
	}
}

func TestNoEvent(t *testing.T) {
	bus := events.NewBus(nil)
	defer bus.Close()
	sub := bus.Subscribe(events.SubscribeOptions{})
	bus.Emit(state("ex", "starting"))
	isReady := func(e events.Event) bool { s, ok := e.(events.StateChanged); return ok && s.To == "ready" }
	if msg := run(t, func(tb testing.TB) { NoEvent(tb, sub, 30*time.Millisecond, "ex ready", isReady) }); msg != "" {
		t.Fatalf("NoEvent failed on another event: %s", msg)
	}
	bus.Emit(state("ex", "ready"))
	if msg := run(t, func(tb testing.TB) { NoEvent(tb, sub, 10*time.Second, "ex ready", isReady) }); !strings.Contains(msg, "ex ready") {
		t.Fatalf("NoEvent let the event pass: %q", msg)
	}
}

func TestEventually(t *testing.T) {
	var n atomic.Int32
	Eventually(t, 10*time.Second, "three looks", func() bool { return n.Add(1) == 3 })
	msg := run(t, func(tb testing.TB) { Eventually(tb, 20*time.Millisecond, "never", func() bool { return false }) })
	if !strings.Contains(msg, "never") {
		t.Fatalf("failure %q does not name the condition", msg)
	}
	if Within(20*time.Millisecond, func() bool { return false }) || !Within(time.Second, func() bool { return true }) {
		t.Fatal("Within does not report whether the condition held")
	}
}
