package runtime

import (
	"context"
	"io"
	"net/http/httptest"
	"testing"
	"time"
)

// TestEventsHTTP2IdleStream: over HTTP/2 a passed write deadline resets
// the stream even with nothing to write; an idle stream whose keepalive
// comes later than the write bound stays open and gets its keepalive.
func TestEventsHTTP2IdleStream(t *testing.T) {
	rt := start(t, Options{})
	rt.stream.keepalive = 600 * time.Millisecond
	rt.stream.writeBound = 100 * time.Millisecond
	rt.stream.changed = make(chan struct{}, 1)
	ts := httptest.NewUnstartedServer(rt.Handler())
	ts.EnableHTTP2 = true
	ts.StartTLS()
	t.Cleanup(ts.Close)
	c := openEvents(t, ts, "/api/mcp/events", nil)
	if c.resp.ProtoMajor != 2 {
		t.Fatalf("served over %s, want HTTP/2", c.resp.Proto)
	}
	c.readUntil(t, ": keepalive\n\n", 1) // fails if the stream ends first
}

// TestEventsCleanEndAfterIdle: the end of the stream at Shutdown, written
// after an idle time longer than the write bound, is a clean end.
func TestEventsCleanEndAfterIdle(t *testing.T) {
	rt := start(t, Options{})
	rt.stream.writeBound = 50 * time.Millisecond
	c := openEvents(t, eventsServer(t, rt.Runtime), "/api/mcp/events", nil)
	c.stop()
	waitOpen(t, rt.Runtime, 1)
	// Named bounded wait: nothing else can say that the write bound has
	// passed on an idle stream.
	<-time.After(200 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), eventsWait)
	defer cancel()
	if err := rt.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(eventsWait, c.cancel)
	defer timer.Stop()
	if rest, err := io.ReadAll(c.resp.Body); err != nil {
		t.Errorf("the end of the stream at Shutdown after %q: %v, want a clean end", rest, err)
	}
}
