package status

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/events"
)

var t0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// feed applies events through a Bus whose reducer is the board, on a
// clock one second further for each event, and returns them as the board
// completed them.
type feed struct {
	b    *Board
	bus  *events.Bus
	now  time.Time
	last events.Event
}

func newFeed(tails func(string) []string) *feed {
	f := &feed{b: NewBoard(tails), now: t0}
	f.bus = events.NewBus(&events.Options{
		Now:     func() time.Time { f.now = f.now.Add(time.Second); return f.now },
		Reducer: func(e events.Event) events.Event { f.last = f.b.Apply(e); return f.last },
	})
	return f
}

func (f *feed) apply(e events.Event) events.Event {
	f.bus.Emit(e)
	return f.last
}

func hdr(name string) events.Header { return events.Header{Server: name} }

func state(name, to string) events.StateChanged {
	return events.StateChanged{Header: hdr(name), To: to}
}

// Every field comes from its one event; From and Restarts are the board's.
func TestApplyLifecycle(t *testing.T) {
	f := newFeed(nil)
	f.apply(events.ServerAdded{Header: hdr("fs")})
	if _, ok := f.b.Get("fs"); ok {
		t.Fatal("a server with no state yet is shown")
	}
	f.apply(state("fs", "starting"))
	f.apply(events.SessionStarted{Header: hdr("fs"), PID: 42})
	e := f.apply(state("fs", "ready")).(events.StateChanged)
	if e.From != "starting" || e.Restarts != 0 {
		t.Errorf("ready event = %+v, want From starting and 0 restarts", e)
	}
	f.apply(events.ToolsChanged{Header: hdr("fs"), Count: 3, Filtered: 2})
	s, _ := f.b.Get("fs")
	if s.State != Ready || !s.Ready || s.PID != 42 || s.ToolCount != 3 || s.ToolsFiltered != 2 || !s.Since.Equal(t0.Add(4*time.Second)) {
		t.Fatalf("ready: %+v", s)
	}
	f.apply(events.SessionLost{Header: hdr("fs"), Error: "EOF"})
	f.apply(events.ToolsChanged{Header: hdr("fs"), Count: 0})
	next := t0.Add(time.Minute)
	e = f.apply(events.StateChanged{Header: hdr("fs"), To: "backoff", Error: "lost", ErrorKind: KindSessionLost, NextRetryAt: next}).(events.StateChanged)
	if e.From != "ready" {
		t.Errorf("backoff From = %q", e.From)
	}
	s, _ = f.b.Get("fs")
	if s.State != Backoff || s.PID != 0 || s.ToolCount != 0 || s.ToolsFiltered != 0 || s.Error != "lost" || s.LastError != "lost" ||
		s.NextRetryAt == nil || !s.NextRetryAt.Equal(next) {
		t.Fatalf("backoff: %+v", s)
	}
	e = f.apply(state("fs", "starting")).(events.StateChanged)
	if e.Restarts != 1 || e.From != "backoff" {
		t.Errorf("restart event = %+v, want From backoff and 1 restart", e)
	}
	s, _ = f.b.Get("fs")
	if s.Restarts != 1 || s.NextRetryAt != nil || s.LastError != "lost" || s.Error != "" {
		t.Fatalf("after the restart: %+v", s)
	}
	f.apply(state("fs", "starting")) // no move: no restart
	f.apply(state("fs", "ready"))
	f.apply(state("fs", "starting")) // a manual restart
	if s, _ := f.b.Get("fs"); s.Restarts != 2 {
		t.Errorf("restarts = %d, want 2", s.Restarts)
	}
}

// A removed server is gone, and a stopping actor's late events about it
// change nothing; a server added again starts from nothing.
func TestApplyRemoved(t *testing.T) {
	f := newFeed(nil)
	f.apply(events.ServerAdded{Header: hdr("a")})
	f.apply(state("a", "ready"))
	f.apply(state("a", "starting"))
	f.apply(events.RequestRefused{Header: hdr("a")})
	f.apply(events.ServerRemoved{Header: hdr("a")})
	f.apply(state("a", "stopped"))
	f.apply(events.RequestRefused{Header: hdr("a")})
	if _, ok := f.b.Get("a"); ok {
		t.Fatal("a removed server is shown")
	}
	f.apply(events.ServerAdded{Header: hdr("a")})
	f.apply(state("a", "starting"))
	if s, _ := f.b.Get("a"); s.Restarts != 0 || s.RequestsRefused != 0 || s.State != Starting {
		t.Fatalf("re-added: %+v", s)
	}
}

func TestApplyConfigError(t *testing.T) {
	f := newFeed(nil)
	f.apply(events.ConfigRejected{Error: "line 3: bad"})
	if got := f.b.ConfigError(); got != "line 3: bad" {
		t.Fatalf("ConfigError = %q", got)
	}
	f.apply(events.ConfigLoaded{})
	if got := f.b.ConfigError(); got != "" {
		t.Fatalf("after ConfigLoaded: %q", got)
	}
	f.apply(events.ConfigRejected{Error: "again"})
	f.apply(events.ConfigSaved{})
	if got := f.b.ConfigError(); got != "" {
		t.Fatalf("after ConfigSaved: %q", got)
	}
}

// RequestsRefused counts every refusal (a count of held-back ones, which
// the board counted when they were tallied, is none) and survives state
// changes; the
// authorize URL lives while the login waits.
func TestApplyRefusalsAndLogin(t *testing.T) {
	f := newFeed(nil)
	f.apply(events.ServerAdded{Header: hdr("a")})
	f.apply(state("a", "starting"))
	f.apply(events.RequestRefused{Header: hdr("a"), Method: "sampling/createMessage", Limit: "rate"})
	f.apply(events.RequestRefused{Header: hdr("a"), Method: "sampling/createMessage", Limit: "rate"})
	f.apply(events.RequestRefused{Header: hdr("a"), Suppressed: 5}) // a last count, not a refusal
	f.apply(events.LoginRequired{Header: hdr("a"), AuthorizeURL: "http://as/authorize"})
	f.apply(state("a", "authorizing"))
	if s, _ := f.b.Get("a"); s.RequestsRefused != 2 || s.AuthorizeURL != "http://as/authorize" || s.State != Authorizing {
		t.Fatalf("authorizing: %+v", s)
	}
	f.apply(state("a", "starting"))
	if s, _ := f.b.Get("a"); s.AuthorizeURL != "" || s.RequestsRefused != 2 {
		t.Fatalf("after the login: %+v", s)
	}
}

// tailBuffer is a stand-in for a server's stderr tail.
type tailBuffer struct {
	mu    sync.Mutex
	lines []string
}

func (tb *tailBuffer) add(l string) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	tb.lines = append(tb.lines, l)
}

func (tb *tailBuffer) Lines() []string {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return slices.Clone(tb.lines)
}

// The tail is read when the status is, from the board's lookup.
func TestStderrTailIsReadLive(t *testing.T) {
	tb := &tailBuffer{}
	f := newFeed(func(name string) []string {
		if name == "s" {
			return tb.Lines()
		}
		return nil
	})
	for _, n := range []string{"s", "quiet"} {
		f.apply(events.ServerAdded{Header: hdr(n)})
		f.apply(state(n, "ready"))
	}
	for i, line := range []string{"warming up", "listening"} {
		tb.add(line)
		if got, _ := f.b.Get("s"); !slices.Equal(got.StderrTail, []string{"warming up", "listening"}[:i+1]) {
			t.Errorf("after %q StderrTail = %q", line, got.StderrTail)
		}
	}
	if q, _ := f.b.Get("quiet"); q.StderrTail != nil {
		t.Errorf("server without a tail has StderrTail %q", q.StderrTail)
	}
}

// A slow tail holds up only the reader that asked for it, never Apply (the
// Bus's Emit) or another reader.
func TestSlowTailBlocksNobodyElse(t *testing.T) {
	release, entered := make(chan struct{}), make(chan struct{})
	var once sync.Once
	f := newFeed(func(name string) []string {
		if name == "slow" {
			once.Do(func() { close(entered) })
			<-release
		}
		return nil
	})
	f.apply(events.ServerAdded{Header: hdr("slow")})
	f.apply(state("slow", "ready"))
	f.apply(events.ServerAdded{Header: hdr("other")})
	got := make(chan Server, 1)
	go func() { s, _ := f.b.Get("slow"); got <- s }()
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("Get never read the tail")
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.apply(state("other", "ready"))
		if _, ok := f.b.Get("other"); !ok {
			t.Error("Get(other) = false")
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Error("Apply/Get waited for a slow tail")
	}
	close(release)
	if s := <-got; s.State != Ready {
		t.Errorf("slow = %+v", s)
	}
}

func TestServerJSON(t *testing.T) {
	cases := []struct {
		name string
		s    Server
		want string
	}{
		{
			name: "ready with pid and tail",
			s:    Server{Name: "docs", State: Ready, Ready: true, ToolCount: 2, Since: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), PID: 12, StderrTail: []string{"hi"}},
			want: `{"name":"docs","state":"ready","ready":true,"error":"","error_kind":"","tool_count":2,"tools_filtered":0,"prompt_count":0,"restarts":0,"since":"2025-01-02T03:04:05Z","pid":12,"requests_refused":0,"stderr_tail":["hi"]}`,
		},
		{
			name: "failed without pid or tail",
			s:    Server{Name: "git", State: Failed, Error: "not found", ErrorKind: KindCommandNotFound, Restarts: 1},
			want: `{"name":"git","state":"failed","ready":false,"error":"not found","error_kind":"command_not_found","tool_count":0,"tools_filtered":0,"prompt_count":0,"restarts":1,"since":"0001-01-01T00:00:00Z","requests_refused":0}`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := json.Marshal(tc.s)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("Marshal =\n  %s\nwant\n  %s", got, tc.want)
			}
		})
	}
}

// A state change to what the board shows already is dropped: the manager
// and the server actor both showing a start make one event.
func TestApplyDropsTheStateShown(t *testing.T) {
	f := newFeed(nil)
	sub := f.bus.Subscribe(events.SubscribeOptions{})
	defer sub.Close()
	f.apply(events.ServerAdded{Header: hdr("fs")})
	f.apply(state("fs", "disabled"))
	f.apply(state("fs", "starting"))
	if e := f.apply(state("fs", "starting")); e != nil {
		t.Errorf("a repeated starting came through as %v", e)
	}
	failed := events.StateChanged{Header: hdr("fs"), To: "failed", Error: "exit 1"}
	f.apply(failed)
	f.apply(failed)
	failed.Error = "exit 2"
	f.apply(failed) // a new error is news
	f.bus.Close()
	var got []string
	for {
		e, err := sub.Next(context.Background())
		if err != nil {
			break
		}
		if sc, ok := e.(events.StateChanged); ok {
			got = append(got, fmt.Sprintf("#%d %s->%s %s", sc.Seq, sc.From, sc.To, sc.Error))
		}
	}
	want := []string{"#2 ->disabled ", "#3 disabled->starting ", "#4 starting->failed exit 1", "#5 failed->failed exit 2"}
	if !slices.Equal(got, want) {
		t.Errorf("state changes %q, want %q (gapless seqs)", got, want)
	}
	if s, _ := f.b.Get("fs"); s.Error != "exit 2" {
		t.Errorf("status error %q, want exit 2", s.Error)
	}
}

// A restart is a move into starting from ready, backoff, failed or
// needs_auth; a first start, an enable and a login's end are not.
func TestRestartsRule(t *testing.T) {
	f := newFeed(nil)
	f.apply(events.ServerAdded{Header: hdr("fs")})
	for _, to := range []string{"starting", "ready", "starting", "backoff", "starting", "failed", "starting",
		"needs_auth", "starting", "authorizing", "starting", "disabled", "starting"} {
		f.apply(state("fs", to))
	}
	if s, _ := f.b.Get("fs"); s.Restarts != 4 {
		t.Errorf("restarts = %d, want 4 (from ready, backoff, failed, needs_auth)", s.Restarts)
	}
}

// StartingDetail comes from StartingOutput while starting only, and every
// move clears it; a StartingOutput of a server not starting is no news.
func TestStartingDetail(t *testing.T) {
	f := newFeed(nil)
	f.apply(events.ServerAdded{Header: hdr("npx")})
	f.apply(state("npx", "starting"))
	out := events.StartingOutput{Header: hdr("npx"), Line: "npm: fetching 3/20"}
	if e := f.apply(out); e == nil {
		t.Fatal("the board dropped a starting server's output")
	}
	if st, _ := f.b.Get("npx"); st.StartingDetail != "npm: fetching 3/20" {
		t.Fatalf("starting detail %q", st.StartingDetail)
	}
	f.apply(state("npx", "ready"))
	if st, _ := f.b.Get("npx"); st.StartingDetail != "" {
		t.Fatalf("ready with starting detail %q", st.StartingDetail)
	}
	if e := f.apply(out); e != nil {
		t.Fatalf("a ready server's late starting output was news: %v", e)
	}
	if st, _ := f.b.Get("npx"); st.StartingDetail != "" {
		t.Fatalf("a late starting output set the detail of a ready server: %q", st.StartingDetail)
	}
	f.apply(state("npx", "starting"))
	f.apply(out)
	f.apply(events.StateChanged{Header: hdr("npx"), To: "backoff", Error: "no answer"})
	if st, _ := f.b.Get("npx"); st.StartingDetail != "" {
		t.Fatalf("backoff with starting detail %q", st.StartingDetail)
	}
	// Starting → starting: a repeated state is no news and keeps the
	// detail; a connect begun anew says so with an empty line, which
	// clears it until the new connect writes.
	f.apply(state("npx", "starting"))
	f.apply(out)
	if e := f.apply(state("npx", "starting")); e != nil {
		t.Fatalf("a repeated starting state was news: %v", e)
	}
	if st, _ := f.b.Get("npx"); st.StartingDetail != out.Line {
		t.Fatalf("a repeated starting state changed the detail to %q", st.StartingDetail)
	}
	if e := f.apply(events.StartingOutput{Header: hdr("npx")}); e == nil {
		t.Fatal("the board dropped the empty line of a connect begun anew")
	}
	if st, _ := f.b.Get("npx"); st.StartingDetail != "" {
		t.Fatalf("after a connect began anew: starting detail %q, want none", st.StartingDetail)
	}
	f.apply(events.StartingOutput{Header: hdr("npx"), Line: "npm: fetching 1/20"})
	if st, _ := f.b.Get("npx"); st.StartingDetail != "npm: fetching 1/20" {
		t.Fatalf("the new connect's line: detail %q", st.StartingDetail)
	}
}
