package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/testutil"
)

// fsStarted and fsReady are the two events most tests emit.
var (
	fsStarted = events.SessionStarted{Header: events.Header{Server: "fs"}, PID: 4242, ProtocolVersion: "2025-06-18"}
	fsReady   = events.StateChanged{Header: events.Header{Server: "fs"}, From: "starting", To: "ready"}
)

func TestEventsFrames(t *testing.T) {
	rt := start(t, Options{})
	c := openEvents(t, eventsServer(t, rt.Runtime), "/api/mcp/events", nil)
	base := rt.bus.LastSeq() // whatever Start emitted
	rt.bus.Emit(fsStarted)
	rt.bus.Emit(fsReady)
	frames := c.read(t, 2)

	for i, f := range frames {
		seq := base + uint64(i+1)
		if want := fmt.Sprintf("%s-%d", rt.Boot(), seq); f.id != want {
			t.Errorf("frame %d: id %q, want %q", i, f.id, want)
		}
		if f.num("seq") != float64(seq) || f.str("boot") != rt.Boot() || f.str("server") != "fs" || f.str("type") != f.typ {
			t.Errorf("frame %d: %s, want seq %d, boot %s, server fs and type %s", i, f.raw, seq, rt.Boot(), f.typ)
		}
		if _, err := time.Parse(time.RFC3339Nano, f.str("time")); err != nil {
			t.Errorf("frame %d: time %q: %v", i, f.str("time"), err)
		}
	}
	if f := frames[0]; f.typ != "session_started" || f.num("pid") != 4242 || f.str("protocol_version") != "2025-06-18" {
		t.Errorf("first frame %s %s, want session_started with pid 4242", f.typ, f.raw)
	}
	if f := frames[1]; f.typ != "state_changed" || f.str("from") != "starting" || f.str("to") != "ready" {
		t.Errorf("second frame %s %s, want state_changed starting -> ready", f.typ, f.raw)
	}
	if !strings.HasPrefix(frames[0].raw, fmt.Sprintf(`{"boot":"%s","seq":%d,`, rt.Boot(), base+1)) {
		t.Errorf("data %s does not start with boot and seq", frames[0].raw)
	}
}

// TestEventsResume resumes within one boot, from the header and from the
// query parameter; the header wins, as a browser's reconnect sends it
// while the URL keeps its first id.
func TestEventsResume(t *testing.T) {
	rt := start(t, Options{})
	ts := eventsServer(t, rt.Runtime)
	base := int(rt.bus.LastSeq())
	for range 3 {
		rt.bus.Emit(fsReady)
	}
	// id is that of our n-th event.
	id := func(n int) string { return fmt.Sprintf("%s-%d", rt.Boot(), base+n) }
	for _, tc := range []struct {
		name, query string
		header      map[string]string
		first       float64
	}{
		{"header", "", map[string]string{"Last-Event-ID": id(1)}, 2},
		{"query", "?last_event_id=" + id(2), nil, 3},
		{"header wins", "?last_event_id=" + id(2), map[string]string{"Last-Event-ID": id(1)}, 2},
		{"after the last", "?last_event_id=" + id(3), nil, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := openEvents(t, ts, "/api/mcp/events"+tc.query, tc.header)
			rt.bus.Emit(fsStarted) // a live one after the history
			var got []float64
			for n := tc.first; ; n++ {
				f := c.read(t, 1)[0]
				got = append(got, f.num("seq"))
				if f.num("seq") != float64(base)+n || f.id != id(int(n)) {
					t.Fatalf("frames %v (last id %s), want from %v on", got, f.id, tc.first)
				}
				if f.typ == "session_started" {
					break
				}
			}
		})
	}
}

// TestEventsOtherBoot resumes with an id of another runtime instance, or
// one that does not parse: a dropped event (n 0: unknown) with id
// "<boot>-0", then this instance's history from its first event.
func TestEventsOtherBoot(t *testing.T) {
	rt := start(t, Options{})
	ts := eventsServer(t, rt.Runtime)
	rt.bus.Emit(fsStarted)
	rt.bus.Emit(fsReady)
	last := rt.bus.LastSeq()
	for _, id := range []string{"ZZZZZZZZZZ-1", "garbage", rt.Boot() + "-x", rt.Boot()} {
		t.Run(id, func(t *testing.T) {
			c := openEvents(t, ts, "/api/mcp/events", map[string]string{"Last-Event-ID": id})
			if f := c.read(t, 1)[0]; f.typ != "dropped" || f.num("n") != 0 || f.id != rt.Boot()+"-0" || f.str("boot") != rt.Boot() {
				t.Errorf("first frame %s id %s %s, want dropped n 0 id %s-0", f.typ, f.id, f.raw, rt.Boot())
			}
			for seq := uint64(1); seq <= last; seq++ {
				if f := c.read(t, 1)[0]; f.num("seq") != float64(seq) {
					t.Fatalf("frame %s, want the history from seq 1 on (seq %d)", f.raw, seq)
				}
			}
		})
	}
}

func TestEventsServerFilter(t *testing.T) {
	rt := start(t, Options{})
	c := openEvents(t, eventsServer(t, rt.Runtime), "/api/mcp/events?server=fs", nil)
	gh := fsReady
	gh.Server = "gh"
	rt.bus.Emit(gh)
	rt.bus.Emit(events.ConfigSaved{})
	rt.bus.Emit(fsStarted)
	if f := c.read(t, 1)[0]; f.str("server") != "fs" || f.num("seq") != float64(rt.bus.LastSeq()) {
		t.Errorf("got %s, want only fs's event (seq %d)", f.raw, rt.bus.LastSeq())
	}
}

// TestEventsGuard: the stream is behind the API's Host guard, and refuses
// a browser's cross-origin request (which the writes' guard alone would
// let through for a GET).
func TestEventsGuard(t *testing.T) {
	rt := start(t, Options{})
	ts := eventsServer(t, rt.Runtime)
	for _, tc := range []struct {
		host   string
		header map[string]string
	}{
		{host: "evil.example:7077"},
		{header: map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "http://evil.example"}},
		{header: map[string]string{"Origin": "http://evil.example"}},
		{header: map[string]string{"Mcpvisor-Request": "x"}},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), eventsWait)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+"/api/mcp/events", nil)
		if tc.host != "" {
			req.Host = tc.host
		}
		for k, v := range tc.header {
			req.Header.Set(k, v)
		}
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body) // a refusal is short; a stream would end at ctx's deadline
		resp.Body.Close()
		cancel()
		if resp.StatusCode != http.StatusForbidden || resp.Header.Get("Content-Type") != "application/json" || !json.Valid(body) {
			t.Errorf("host %q, %v: %d %s %q, want a 403 JSON error", tc.host, tc.header, resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
	}
	// The API's own origin (and a client without one) is served.
	c := openEvents(t, ts, "/api/mcp/events", map[string]string{"Origin": ts.URL, "Sec-Fetch-Site": "same-origin"})
	rt.bus.Emit(fsReady)
	c.read(t, 1)
}

// TestEventsEndOnShutdown: the stream delivers what the runtime emitted
// and ends when Shutdown has closed the bus.
func TestEventsEndOnShutdown(t *testing.T) {
	rt := start(t, Options{})
	c := openEvents(t, eventsServer(t, rt.Runtime), "/api/mcp/events", nil)
	rt.bus.Emit(fsReady)
	ctx, cancel := context.WithTimeout(context.Background(), eventsWait)
	defer cancel()
	if err := rt.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	c.read(t, 1)
	c.ended(t)
	waitOpen(t, rt.Runtime, 0)
}

// TestEventsEndOnClientGone: a client that goes away ends its stream (and
// so its subscription), with no event to write.
func TestEventsEndOnClientGone(t *testing.T) {
	rt := start(t, Options{})
	c := openEvents(t, eventsServer(t, rt.Runtime), "/api/mcp/events", nil)
	waitOpen(t, rt.Runtime, 1)
	c.close()
	waitOpen(t, rt.Runtime, 0)
}

// TestEventsKeepalive: an idle stream gets a comment every keepalive
// period (read as bytes: the client library hides comments).
func TestEventsKeepalive(t *testing.T) {
	rt := start(t, Options{})
	rt.stream.keepalive = 20 * time.Millisecond
	c := openEvents(t, eventsServer(t, rt.Runtime), "/api/mcp/events", nil)
	c.readUntil(t, ": keepalive\n\n", 2)
}

// TestEventsOutlivesWriteTimeout: the connection's WriteTimeout (as the
// demo's server sets) does not cut the stream: each frame has its own
// deadline.
func TestEventsOutlivesWriteTimeout(t *testing.T) {
	rt := start(t, Options{})
	ts := eventsServer(t, rt.Runtime, func(ts *httptest.Server) {
		ts.Config.WriteTimeout = 100 * time.Millisecond
		ts.Config.ReadTimeout = 100 * time.Millisecond
	})
	c := openEvents(t, ts, "/api/mcp/events", nil)
	// Named bounded wait: nothing else can say that the timeouts have
	// passed without cutting the stream.
	<-time.After(300 * time.Millisecond)
	rt.bus.Emit(fsReady)
	if f := c.read(t, 1)[0]; f.typ != "state_changed" {
		t.Errorf("got %s", f.raw)
	}
}

// TestEventsNoSecret: a server that dies printing its env secret (as it
// is and in base64) as its last stderr lines has its crash on the stream
// (the error quotes the last stderr line); no frame carries the secret in
// any encoded form.
func TestEventsNoSecret(t *testing.T) {
	const secret = "sk-events-planted-0042"
	crasher := config.Server{Name: "crasher", Type: config.TypeLocal, Enabled: true,
		Command: []string{"/bin/sh", "-c", `echo "key $API_KEY" >&2; printf %s "$API_KEY" | base64 -w0 >&2; echo >&2; exit 1`},
		Env:     map[string]string{"API_KEY": secret, testutil.MarkerEnv: marker}}
	rt := start(t, Options{}, crasher)
	// An id of another instance: the stream starts from the first event,
	// whenever the crash came.
	c := openEvents(t, eventsServer(t, rt.Runtime), "/api/mcp/events?server=crasher&last_event_id=other-1", nil)
	for {
		f := c.read(t, 1)[0]
		for _, form := range secretForms(secret) {
			if strings.Contains(f.raw+f.id+f.typ, form.value) {
				t.Fatalf("a %s frame carries %s", f.typ, form.name)
			}
		}
		if f.typ == "state_changed" && strings.Contains(f.str("error"), "last stderr line") {
			break // the crash, with the server's text
		}
	}
}
