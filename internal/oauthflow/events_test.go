package oauthflow

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/events"
)

// tokEvents is an AuthCode's Emit and Logger for a test: the events it
// emitted, in order, and what it logged.
type tokEvents struct {
	ch  chan events.Event
	log bytes.Buffer // written only by the code under test's goroutine before the test reads
}

func newTokEvents() *tokEvents { return &tokEvents{ch: make(chan events.Event, 16)} }

func (e *tokEvents) set(cfg *AuthCodeConfig) {
	cfg.Emit = func(ev events.Event) { e.ch <- ev }
	cfg.Logger = slog.New(slog.NewTextHandler(&e.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// next returns the next event, failing if none comes within tokWait.
func (e *tokEvents) next(t *testing.T) events.Event {
	t.Helper()
	select {
	case ev := <-e.ch:
		return ev
	case <-time.After(tokWait):
		t.Fatal("no event")
		return nil
	}
}

// none fails if an event is waiting: refreshNow has returned, and every
// event of a refresh is emitted before it does.
func (e *tokEvents) none(t *testing.T) {
	t.Helper()
	select {
	case ev := <-e.ch:
		t.Fatalf("unexpected event %v", ev)
	default:
	}
}

// A refresh that renews the token emits one TokenRefreshed of the server,
// and logs nothing: the runtime's log renders the event.
func TestAuthCodeRefreshEmitsTokenRefreshed(t *testing.T) {
	ep := tokNewEndpoint(t)
	st := tokStore(t)
	if err := st.Save("ex", tokRecord(ep, time.Hour)); err != nil {
		t.Fatal(err)
	}
	got := newTokEvents()
	h := tokAuthCodeWith(t, st, got.set)
	if err := tokCurrent(t, h).refreshNow(); err != nil {
		t.Fatal(err)
	}
	ev, ok := got.next(t).(events.TokenRefreshed)
	if !ok || ev.Server != "ex" {
		t.Fatalf("event %v, want ex's TokenRefreshed", ev)
	}
	got.none(t)
	if got.log.Len() != 0 {
		t.Errorf("a refresh was logged as well as emitted: %s", got.log.String())
	}
}

// A refused refresh emits one RefreshRefused of the server whose error
// names the refusal and holds no secret, and logs nothing.
func TestAuthCodeRefusedEmitsRefreshRefused(t *testing.T) {
	ep := tokNewEndpoint(t)
	ep.setMode(tokRefuse)
	st := tokStore(t)
	if err := st.Save("ex", tokRecord(ep, time.Hour)); err != nil {
		t.Fatal(err)
	}
	got := newTokEvents()
	h := tokAuthCodeWith(t, st, got.set)
	if err := tokCurrent(t, h).refreshNow(); !errors.Is(err, ErrNeedsReauth) {
		t.Fatalf("refreshNow() = %v, want ErrNeedsReauth", err)
	}
	ev, ok := got.next(t).(events.RefreshRefused)
	if !ok || ev.Server != "ex" || !strings.Contains(ev.Error, "invalid_grant") {
		t.Fatalf("event %v, want ex's RefreshRefused naming invalid_grant", ev)
	}
	for _, secret := range []string{tokOldAccess, tokOldRefresh, "client-secret-1"} {
		if strings.Contains(ev.String(), secret) {
			t.Errorf("the event holds a secret: %v", ev)
		}
	}
	got.none(t)
	if got.log.Len() != 0 {
		t.Errorf("a refused refresh was logged as well as emitted: %s", got.log.String())
	}
}
