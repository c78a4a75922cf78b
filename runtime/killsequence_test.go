package runtime

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/status"
)

// The SIGKILL event sequence, read by a host over the Go API
// (Runtime.Subscribe) and over GET /api/mcp/events, checked by one
// expected sequence: both views are turned into killEvents first.

// killEvent is what the sequence check reads of one event, whichever way
// it came.
type killEvent struct {
	seq         uint64
	typ         string
	time        time.Time
	from, to    string
	nextRetryAt time.Time
	restarts    int
	pid         int
	protocol    string
	exitStatus  string
	err         string
	count       int
	added       int
	text        string // for the failure message
}

// fromEvent is the Go API's view.
func fromEvent(e events.Event) killEvent {
	k := killEvent{seq: e.Head().Seq, typ: e.Type(), time: e.Head().Time, text: e.String()}
	switch e := e.(type) {
	case events.StateChanged:
		k.from, k.to, k.nextRetryAt, k.restarts, k.err = e.From, e.To, e.NextRetryAt, e.Restarts, e.Error
	case events.SessionStarted:
		k.pid, k.protocol = e.PID, e.ProtocolVersion
	case events.SessionLost:
		k.exitStatus, k.err = e.ExitStatus, e.Error
	case events.ToolsChanged:
		k.count, k.added = e.Count, len(e.Added)
	}
	return k
}

// fromFrame is the SSE view: the frame's event type and id, and the
// snake_case fields of its data. It checks what only a frame has: the id
// is "<boot>-<seq>" of this runtime, and the data repeats the type.
func fromFrame(t *testing.T, boot string, f sseFrame) killEvent {
	t.Helper()
	k := killEvent{seq: uint64(f.num("seq")), typ: f.typ, text: f.typ + " " + f.raw}
	if want := fmt.Sprintf("%s-%d", boot, k.seq); f.id != want || f.str("boot") != boot {
		t.Errorf("frame id %q boot %q, want id %q of boot %s: %s", f.id, f.str("boot"), want, boot, f.raw)
	}
	if f.str("type") != f.typ {
		t.Errorf("frame event %q, data type %q", f.typ, f.str("type"))
	}
	parse := func(key string) time.Time {
		v := f.str(key)
		if v == "" {
			return time.Time{}
		}
		at, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			t.Errorf("frame %s: %s %q: %v", f.raw, key, v, err)
		}
		return at
	}
	k.time, k.nextRetryAt = parse("time"), parse("next_retry_at")
	k.from, k.to, k.restarts, k.err = f.str("from"), f.str("to"), int(f.num("restarts")), f.str("error")
	k.pid, k.protocol, k.exitStatus = int(f.num("pid")), f.str("protocol_version"), f.str("exit_status")
	k.count = int(f.num("count"))
	if added, ok := f.data["added"].([]any); ok {
		k.added = len(added)
	}
	return k
}

// checkKillSequence reads events from next (server logs left out) after
// the stdio server "ex" on firstPID was SIGKILLed, and checks they say,
// in order: session lost (signal: killed) → ready→backoff with a
// next_retry_at after the event → backoff→starting (restart 1) → session
// started on a new pid → starting→ready → its tools listed again, with
// sequence numbers strictly increasing. Tool and prompt changes may come
// between the loss and the backoff (the catalog goes with the session).
// Each StateChanged is already in Status() when read (the board is the
// reducer). It returns the new pid.
func checkKillSequence(t *testing.T, rt *testRuntime, firstPID int, next func() killEvent) int {
	t.Helper()
	var newPID int
	steps := []struct {
		what string
		ok   func(killEvent) bool
	}{
		{"session lost (signal: killed)", func(k killEvent) bool {
			return k.typ == events.TypeSessionLost && k.exitStatus == "signal: killed" && k.err != ""
		}},
		{"state ready -> backoff with next_retry_at", func(k killEvent) bool {
			return k.typ == events.TypeStateChanged && k.from == "ready" && k.to == "backoff" &&
				!k.nextRetryAt.IsZero() && k.nextRetryAt.After(k.time)
		}},
		{"state backoff -> starting, restarts 1", func(k killEvent) bool {
			return k.typ == events.TypeStateChanged && k.from == "backoff" && k.to == "starting" && k.restarts == 1
		}},
		{"session started on a new pid", func(k killEvent) bool {
			newPID = k.pid
			return k.typ == events.TypeSessionStarted && k.pid != 0 && k.pid != firstPID && k.protocol != ""
		}},
		{"state starting -> ready", func(k killEvent) bool {
			return k.typ == events.TypeStateChanged && k.from == "starting" && k.to == "ready" && k.restarts == 1
		}},
		{"tools changed", func(k killEvent) bool {
			return k.typ == events.TypeToolsChanged && k.count > 0 && k.added == k.count
		}},
	}
	var seen []string
	var lastSeq uint64
	for _, s := range steps {
		for {
			k := next()
			seen = append(seen, k.text)
			if k.seq <= lastSeq {
				t.Fatalf("seq %d after %d; events so far:\n%s", k.seq, lastSeq, strings.Join(seen, "\n"))
			}
			lastSeq = k.seq
			if k.typ == events.TypeStateChanged {
				if st := mustStatus(t, rt, "ex"); st.Restarts < k.restarts {
					t.Errorf("event %s: status shows restarts %d", k.text, st.Restarts)
				}
			}
			if s.ok(k) {
				break
			}
			if k.typ == events.TypeToolsChanged || k.typ == events.TypePromptsChanged {
				continue
			}
			t.Fatalf("want %s, got %s; events so far:\n%s", s.what, k.text, strings.Join(seen, "\n"))
		}
	}
	st := mustStatus(t, rt, "ex")
	if st.State != status.Ready || st.PID != newPID || st.Restarts != 1 || st.ToolCount == 0 {
		t.Errorf("status after the events = %+v, want ready on pid %d with 1 restart and its tools", st, newPID)
	}
	return newPID
}

// readyForKill starts a runtime with the example server "ex" and returns
// it with the server's pid once it is ready.
func readyForKill(t *testing.T) (*testRuntime, int) {
	t.Helper()
	rt := start(t, Options{}, exampleServer("ex"))
	first := rt.waitSettled(t, "ex")
	if first.State != status.Ready || first.PID == 0 {
		t.Fatalf("ex = %+v", first)
	}
	return rt, first.PID
}

// TestSIGKILLEventSequence reads the sequence as a host does over the Go
// API: Runtime.Subscribe from the next event on, one server, with
// Go's exit status in the loss.
func TestSIGKILLEventSequence(t *testing.T) {
	rt, pid := readyForKill(t)
	sub := rt.Subscribe(events.SubscribeOptions{Server: "ex"})
	defer sub.Close()
	if err := testutil.Kill(pid); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	checkKillSequence(t, rt, pid, func() killEvent {
		e := nextEvent(t, sub, deadline)
		if _, ok := e.(events.Dropped); ok {
			t.Fatalf("the subscription dropped events: %s", e)
		}
		return fromEvent(e)
	})
}

// TestSIGKILLEventSequenceSSE reads the same sequence from GET
// /api/mcp/events?server=ex: frame types, from/to, next_retry_at, pid,
// and ids "<boot>-<seq>" strictly increasing.
func TestSIGKILLEventSequenceSSE(t *testing.T) {
	rt, pid := readyForKill(t)
	c := openEvents(t, eventsServer(t, rt.Runtime), "/api/mcp/events?server=ex", nil)
	waitOpen(t, rt.Runtime, 1) // subscribed before the kill
	if err := testutil.Kill(pid); err != nil {
		t.Fatal(err)
	}
	checkKillSequence(t, rt, pid, func() killEvent {
		for {
			f := c.read(t, 1)[0]
			switch f.typ {
			case events.TypeServerLog, events.TypeStartingOutput:
				continue
			case events.TypeDropped:
				t.Fatalf("the stream dropped events: %s", f.raw)
			}
			if f.str("server") != "ex" {
				t.Errorf("frame of another server on ?server=ex: %s", f.raw)
			}
			return fromFrame(t, rt.Boot(), f)
		}
	})
}
