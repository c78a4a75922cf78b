package chaos

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/runtime"
	"github.com/openprogram/mcpvisor/status"
)

// The chaos run rebuilds every server's status from the event stream
// alone, with a reducer of its own written from the events' and the
// status board's documentation (not status.Board.Apply, which it checks),
// and compares it with Status() field by field: once the servers have
// recovered, and again after Shutdown, when no event can come any more.

// rebuildBuffer is the subscription's buffer: the reader folds as fast as
// the events come, so this only has to cover a scheduling hiccup; a gap
// shows as a Dropped and is reported, not hidden.
const rebuildBuffer = 1 << 14

// restartFrom: a move into starting from one of these is a restart
// (status.Board's documented rule).
var restartFrom = map[status.State]bool{status.Ready: true, status.Backoff: true, status.Failed: true, status.NeedsAuth: true}

// rebuild folds a subscription from sequence 1 into statuses.
type rebuild struct {
	sub     *events.Subscription
	done    chan struct{}
	changed chan struct{}

	mu          sync.Mutex
	servers     map[string]*status.Server
	configError string
	folded      int
	dropped     uint64
	// disagreements are StateChanged events whose From or Restarts (filled
	// in by the board) differ from what this fold says.
	disagreements []string
}

// watchEvents subscribes to rt's events from the first one and folds them
// until rt shuts down.
func watchEvents(rt *runtime.Runtime) *rebuild {
	r := &rebuild{
		sub:     rt.Subscribe(events.SubscribeOptions{From: 1, Buffer: rebuildBuffer}),
		done:    make(chan struct{}),
		changed: make(chan struct{}, 1),
		servers: map[string]*status.Server{},
	}
	go func() {
		defer close(r.done)
		for {
			e, err := r.sub.Next(context.Background())
			if err != nil {
				return // events.ErrClosed: Shutdown, after the last event
			}
			r.apply(e)
			select {
			case r.changed <- struct{}{}:
			default:
			}
		}
	}()
	return r
}

func (r *rebuild) apply(e events.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.folded++
	name := e.Head().Server
	switch e := e.(type) {
	case events.Dropped:
		r.dropped += e.N
		return
	case events.ServerAdded:
		r.servers[name] = &status.Server{Name: name}
		return
	case events.ServerRemoved:
		delete(r.servers, name)
		return
	case events.ConfigRejected:
		r.configError = e.Error
		return
	case events.ConfigSaved, events.ConfigLoaded:
		r.configError = ""
		return
	}
	s := r.servers[name]
	if s == nil || name == "" {
		return
	}
	switch e := e.(type) {
	case events.StateChanged:
		from, to := s.State, status.State(e.To)
		if to == status.Starting && restartFrom[from] {
			s.Restarts++
		}
		if e.From != string(from) || e.Restarts != s.Restarts {
			r.disagreements = append(r.disagreements, fmt.Sprintf("%s: the fold says from %q restarts %d", e, from, s.Restarts))
		}
		if from != to || s.Since.IsZero() {
			s.Since = e.Time
		}
		s.State, s.Ready, s.Error, s.ErrorKind = to, to == status.Ready, e.Error, e.ErrorKind
		if e.Error != "" && to != status.Starting {
			s.LastError = e.Error
		}
		s.NextRetryAt = nil
		if !e.NextRetryAt.IsZero() {
			at := e.NextRetryAt
			s.NextRetryAt = &at
		}
		if to != status.Ready {
			s.PID = 0 // the pid goes with the state change after a SessionLost, not with the loss
		}
		if to != status.Authorizing {
			s.AuthorizeURL = ""
		}
		if to == status.Disabled {
			s.ServerInfo, s.ProtocolVersion = nil, ""
		}
	case events.SessionStarted:
		s.PID = e.PID
		s.ServerInfo, s.ProtocolVersion = e.ServerInfo, e.ProtocolVersion
	case events.InstructionsChanged:
		s.Instructions = e.Instructions // the board drops one that says what it shows
	case events.ToolsChanged:
		s.ToolCount = e.Count
	case events.PromptsChanged:
		s.PromptCount = e.Count
	case events.LoginRequired:
		s.AuthorizeURL = e.AuthorizeURL
	case events.LoginCompleted, events.LoginFailed:
		s.AuthorizeURL = ""
	case events.RequestRefused:
		// Those held back at the source were counted by the board; a
		// removed server's last count (no Method) is not a refusal.
		s.RequestsRefused += e.Suppressed
		if e.Method != "" {
			s.RequestsRefused++
		}
	}
}

// diff lists every field in which st and the fold differ (the stderr tail
// is not in events and is left out).
func (r *rebuild) diff(st runtime.Status) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var d []string
	if st.ConfigError != r.configError {
		d = append(d, fmt.Sprintf("config error: status %q, events %q", st.ConfigError, r.configError))
	}
	shown := map[string]bool{}
	for _, got := range st.Servers {
		shown[got.Name] = true
		mine := r.servers[got.Name]
		if mine == nil || mine.State == "" {
			d = append(d, got.Name+": in Status(), not in the events")
			continue
		}
		d = append(d, serverDiff(got, *mine)...)
	}
	for name, s := range r.servers {
		if s.State != "" && !shown[name] {
			d = append(d, name+": in the events, not in Status()")
		}
	}
	return d
}

func serverDiff(got, mine status.Server) []string {
	var d []string
	field := func(name string, a, b any) {
		if a != b {
			d = append(d, fmt.Sprintf("%s.%s: status %v, events %v", got.Name, name, a, b))
		}
	}
	retry := func(p *time.Time) string {
		if p == nil {
			return "none"
		}
		return p.UTC().Format(time.RFC3339Nano)
	}
	field("State", got.State, mine.State)
	field("Ready", got.Ready, mine.Ready)
	field("Error", got.Error, mine.Error)
	field("ErrorKind", got.ErrorKind, mine.ErrorKind)
	field("ToolCount", got.ToolCount, mine.ToolCount)
	field("PromptCount", got.PromptCount, mine.PromptCount)
	field("Restarts", got.Restarts, mine.Restarts)
	field("Since", got.Since.UTC().Format(time.RFC3339Nano), mine.Since.UTC().Format(time.RFC3339Nano))
	field("LastError", got.LastError, mine.LastError)
	field("NextRetryAt", retry(got.NextRetryAt), retry(mine.NextRetryAt))
	field("PID", got.PID, mine.PID)
	field("AuthorizeURL", got.AuthorizeURL, mine.AuthorizeURL)
	field("RequestsRefused", got.RequestsRefused, mine.RequestsRefused)
	field("ProtocolVersion", got.ProtocolVersion, mine.ProtocolVersion)
	field("Instructions", got.Instructions, mine.Instructions)
	field("ServerInfo", fmt.Sprint(got.ServerInfo), fmt.Sprint(mine.ServerInfo))
	return d
}

// settled compares the fold with rt.Status() while the runtime runs:
// Status() already holds every event it will be given (the board reduces
// inside Emit), so the fold matches it once the reader has caught up, and
// each event it folds signals changed. It waits for that up to limit.
func (r *rebuild) settled(rt *runtime.Runtime, limit time.Duration) []string {
	timer := time.NewTimer(limit)
	defer timer.Stop()
	for {
		d := r.diff(rt.Status())
		if len(d) == 0 {
			return nil
		}
		select {
		case <-r.changed:
		case <-timer.C:
			return d
		}
	}
}

// finish waits for the reader to have read the last event (rt has shut
// down) and compares again: nothing can change any more.
func (r *rebuild) finish(rt *runtime.Runtime, limit time.Duration) ([]string, error) {
	select {
	case <-r.done:
	case <-time.After(limit):
		return nil, errors.New("the event reader did not end after Shutdown")
	}
	return r.diff(rt.Status()), nil
}

// verdict checks the comparisons and the From/Restarts every StateChanged
// carried, and returns the chaos summary's status_from_events value:
// "equal", or with a gap that a Dropped explains, "dropped_N" (not a
// failure).
func (r *rebuild) verdict(t *testing.T, running, final []string) string {
	t.Helper()
	r.mu.Lock()
	dropped, folded, disagree := r.dropped, r.folded, r.disagreements
	r.mu.Unlock()
	bad := map[string][]string{"after recovery": running, "after Shutdown": final, "in the events' From/Restarts": disagree}
	verdict := "equal"
	for when, d := range bad {
		if len(d) > 0 && dropped > 0 {
			verdict = fmt.Sprintf("gap_explained_by_dropped_%d", dropped)
			t.Logf("status rebuilt from events differs %s, explained by %d dropped events: %s", when, dropped, strings.Join(d, "; "))
		} else if len(d) > 0 {
			verdict = "differs"
			if len(d) > 10 {
				d = append(d[:10], fmt.Sprintf("… %d more", len(d)-10))
			}
			t.Errorf("status rebuilt from %d events differs from Status() %s:\n%s", folded, when, strings.Join(d, "\n"))
		}
	}
	return fmt.Sprintf("%s(events=%d,dropped=%d)", verdict, folded, dropped)
}
