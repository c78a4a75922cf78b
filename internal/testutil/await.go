package testutil

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/status"
)

// AwaitEvent reads sub until an event matches and returns it. It fails
// the test, naming what it waited for and the events it saw instead, when
// within passes first, when sub ends, or when sub dropped events (the one
// awaited may be among them; a test that expects drops subscribes with a
// Buffer that holds what it needs, or matches the Dropped itself).
//
// Subscribe before the action that makes the event happen (or subscribe
// with From), so that it cannot come and go before the wait begins.
func AwaitEvent(tb testing.TB, sub *events.Subscription, within time.Duration, what string, match func(events.Event) bool) events.Event {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	var seen []string
	for {
		e, err := sub.Next(ctx)
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				tb.Fatalf("timed out after %v waiting for %s; saw instead:%s", within, what, seenList(seen))
			}
			tb.Fatalf("waiting for %s: %v; saw instead:%s", what, err, seenList(seen))
		}
		if match(e) {
			return e
		}
		if _, ok := e.(events.Dropped); ok {
			tb.Fatalf("waiting for %s: %v (the event may be among them); saw before:%s", what, e, seenList(seen))
		}
		seen = append(seen, e.String())
	}
}

// Await is AwaitEvent for one event type: it returns the first E that
// match accepts (a nil match accepts any E).
func Await[E events.Event](tb testing.TB, sub *events.Subscription, within time.Duration, what string, match func(E) bool) E {
	tb.Helper()
	return AwaitEvent(tb, sub, within, what, func(e events.Event) bool {
		ev, ok := e.(E)
		return ok && (match == nil || match(ev))
	}).(E)
}

// NoEvent reads sub for the whole of within and fails the test if an
// event matches: the bounded wait for an event that must not come, for
// where nothing else can say it did not. Name each use with a comment
// "// must not come: …".
func NoEvent(tb testing.TB, sub *events.Subscription, within time.Duration, what string, match func(events.Event) bool) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	for {
		e, err := sub.Next(ctx)
		if errors.Is(err, context.DeadlineExceeded) {
			return
		}
		if err != nil {
			tb.Fatalf("watching for %s: %v", what, err)
		}
		if match(e) {
			tb.Fatalf("%s: %v", what, e)
		}
		if _, ok := e.(events.Dropped); ok {
			tb.Fatalf("watching for %s: %v (it may be among them)", what, e)
		}
	}
}

// Eventually checks cond until it holds and fails the test, naming what,
// if within passes first: the one wait for a condition that no event
// announces (a file written, a log line, a process gone, an HTTP answer).
// Where an event says it, wait for the event instead.
func Eventually(tb testing.TB, within time.Duration, what string, cond func() bool) {
	tb.Helper()
	if !Within(within, cond) {
		tb.Fatalf("timed out after %v waiting for %s", within, what)
	}
}

// Within reports whether cond held before within passed, checking it at
// once and then every few milliseconds: Eventually for a caller that
// says itself what a timeout means (a test server's goroutine, a
// helper that returns the error).
func Within(within time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(within)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		<-tick.C
	}
	return true
}

func seenList(seen []string) string {
	if len(seen) == 0 {
		return " nothing"
	}
	const keep = 20
	if len(seen) > keep {
		seen = append([]string{"…"}, seen[len(seen)-keep:]...)
	}
	return "\n\t" + strings.Join(seen, "\n\t")
}

// AwaitState waits until the server that sub follows (subscribed with
// its Server) reaches a state that ok accepts, given the restarts the
// status board counted. now is its status read after subscribing: the
// wait ends at once when it already qualifies, and otherwise reads the
// server's events, so that a state that comes and goes is not missed.
// A ready state counts once its tools are registered (the ToolsChanged
// that follows it: ready is shown first), since a test that waits for
// ready then calls them; a server with no tools is never ready to it.
func AwaitState(tb testing.TB, sub *events.Subscription, within time.Duration, what string, now status.Server, ok func(st status.State, restarts int) bool) {
	tb.Helper()
	state, restarts, tools := now.State, now.Restarts, now.ToolCount > 0
	done := func() bool { return state != "" && ok(state, restarts) && (state != status.Ready || tools) }
	if done() {
		return
	}
	AwaitEvent(tb, sub, within, what, func(e events.Event) bool {
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
}
