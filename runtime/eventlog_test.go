package runtime

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/status"
)

// nextEvent returns the next event of sub that is not a server log line
// (nor a starting server's stderr, which a slow start under load makes),
// failing the test when none comes within the deadline.
func nextEvent(t *testing.T, sub *events.Subscription, deadline time.Time) events.Event {
	t.Helper()
	return testutil.AwaitEvent(t, sub, time.Until(deadline), "the next lifecycle event", func(e events.Event) bool {
		switch e.(type) {
		case events.ServerLog, events.StartingOutput:
			return false
		}
		return true
	})
}

// TestRestartCountInEventsIsStatus: after a kill and a manual restart,
// every StateChanged carries the restart count Status() shows for it.
func TestRestartCountInEventsIsStatus(t *testing.T) {
	rt := start(t, Options{}, exampleServer("ex"))
	first := rt.waitSettled(t, "ex")
	sub := rt.bus.Subscribe(events.SubscribeOptions{Server: "ex", From: 1})
	defer sub.Close()
	if err := testutil.Kill(first.PID); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	last := -1
	readyAgain := func() {
		t.Helper()
		for {
			e := nextEvent(t, sub, deadline)
			if s, ok := e.(events.StateChanged); ok {
				if s.Restarts < last {
					t.Errorf("restarts went back: %d after %d (%s)", s.Restarts, last, s)
				}
				last = s.Restarts
				if s.To == "ready" && s.From != "" && s.From != "ready" && last > 0 {
					return
				}
			}
		}
	}
	readyAgain()
	if _, err := rt.RestartServer(t.Context(), "ex"); err != nil {
		t.Fatal(err)
	}
	readyAgain()
	if st := mustStatus(t, rt, "ex"); st.Restarts != last || last != 2 {
		t.Errorf("status restarts = %d, last event said %d, want both 2 (a kill and a restart)", st.Restarts, last)
	}
}

// TestLogFromEvents: the log is written by the event subscriber, holds
// the lines hosts rely on once Shutdown returned, and no form of a secret
// a crashing server prints reaches it or any event.
func TestLogFromEvents(t *testing.T) {
	const secret = "evt-secret-5e1f-MARK"
	crasher := config.Server{Name: "crasher", Type: config.TypeLocal, Enabled: true,
		Command: []string{"/bin/sh", "-c", `echo "token $SECRET" >&2; exit 1`},
		Env:     map[string]string{"SECRET": secret, testutil.MarkerEnv: marker}}
	rt := start(t, Options{Restart: RestartPolicy{Initial: time.Hour}}, exampleServer("ex"), crasher)
	first := rt.waitSettled(t, "ex")
	rt.waitState(t, "crasher", status.Backoff)
	sub := rt.bus.Subscribe(events.SubscribeOptions{Server: "ex", From: rt.bus.LastSeq() + 1})
	defer sub.Close()
	if err := testutil.Kill(first.PID); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); ; {
		if s, ok := nextEvent(t, sub, deadline).(events.StateChanged); ok && s.To == "backoff" {
			break
		}
	}
	all := rt.bus.Subscribe(events.SubscribeOptions{From: 1}) // the whole history
	defer all.Close()
	if err := rt.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	var texts []string
	for {
		e, err := all.Next(t.Context())
		if err != nil {
			break
		}
		data, _ := json.Marshal(e)
		texts = append(texts, e.String(), string(data))
	}
	logs := rt.logs.String()
	for _, want := range []string{
		`msg="server ready" server=ex`,
		`msg="session lost" server=ex`, `exit_status="signal: killed"`,
		`msg="session lost; restarting after backoff" server=ex`,
		`msg="server ready" server=ex from=starting to=ready restarts=0`,
		`msg="tools changed" server=ex`,
		`server=crasher`,
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("the log has no %q:\n%s", want, logs)
		}
	}
	texts = append(texts, logs)
	for _, f := range secretForms(secret) {
		for _, text := range texts {
			if strings.Contains(text, f.value) {
				t.Errorf("the log or an event shows %s", f.name)
			}
		}
	}
	if !strings.Contains(fmt.Sprint(texts), "[redacted]") {
		t.Error("nothing shows the crasher's stderr scrubbed: the test did not see the secret pass")
	}
}

// TestConfigEvents: the config error has one source, the events: a file
// that does not parse at Start is a ConfigRejected (and Status says so),
// a reload that finds it fixed is a ConfigLoaded (and Status no longer
// says so), and a save is a ConfigSaved.
func TestConfigEvents(t *testing.T) {
	rt := startWithFile(t, []byte(`{"servers": {,}}`))
	if rt.Status().ConfigError == "" {
		t.Fatal("no config error for a file that does not parse")
	}
	sub := rt.bus.Subscribe(events.SubscribeOptions{From: 1})
	defer sub.Close()
	deadline := time.Now().Add(10 * time.Second)
	if e, ok := nextEvent(t, sub, deadline).(events.ConfigRejected); !ok || !strings.Contains(e.Error, "does not parse") {
		t.Fatalf("first event = %v, want the ConfigRejected of Start", e)
	}
	if err := os.WriteFile(filepath.Join(rt.opts.StateDir, config.FileName), []byte(`{"servers": {}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	if e := nextEvent(t, sub, deadline); e.Type() != events.TypeConfigLoaded {
		t.Fatalf("after the fix and a reload: %v, want config_loaded", e)
	}
	if msg := rt.Status().ConfigError; msg != "" {
		t.Fatalf("config error %q after the fix", msg)
	}
	srv := exampleServer("ex")
	srv.Enabled = false
	if _, err := rt.AddServer(t.Context(), srv); err != nil {
		t.Fatal(err)
	}
	for {
		if nextEvent(t, sub, deadline).Type() == events.TypeConfigSaved {
			break
		}
	}
}

// TestStderrLineIsAnEvent: a line a server writes on stderr reaches a
// subscriber as a server_log of level stderr, and the log (its one
// writer, the event log) has it once.
func TestStderrLineIsAnEvent(t *testing.T) {
	rt := start(t, Options{}, exampleServer("ex"))
	rt.waitReady(t, "ex")
	sub := rt.subscribe(t, "ex")
	const line = "a line for the stream 7f3a"
	mustCall(t, rt, "ex__stderr", map[string]any{"text": line})
	e := testutil.Await(t, sub, 10*time.Second, "the stderr line", func(e events.ServerLog) bool { return strings.Contains(e.Text, line) })
	if e.Level != events.LevelStderr || e.Text != line || e.Logger != "" {
		t.Errorf("stderr line as %#v, want level stderr and the line as its text", e)
	}
	if err := rt.Shutdown(t.Context()); err != nil { // the log has written every event
		t.Fatal(err)
	}
	if n := strings.Count(rt.logs.String(), line); n != 1 {
		t.Errorf("the log has the line %d times, want once:\n%s", n, rt.logs.String())
	}
}
