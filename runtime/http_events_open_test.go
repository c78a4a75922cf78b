package runtime

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestEventsHead: HEAD answers the stream's headers and holds nothing:
// no stream stays open, and the client's connection serves its next
// request.
func TestEventsHead(t *testing.T) {
	rt := start(t, Options{})
	ts := eventsServer(t, rt.Runtime)
	ctx, cancel := context.WithTimeout(context.Background(), eventsWait)
	defer cancel()
	// Before ts closes (which waits for its handlers): a stream the HEAD
	// left open ends with the runtime.
	t.Cleanup(func() { _ = rt.Shutdown(context.Background()) })
	for _, path := range []string{"/api/mcp/events", "/healthz"} {
		method := http.MethodHead
		if path == "/healthz" {
			method = http.MethodGet // on the connection the HEAD used
		}
		req, err := http.NewRequestWithContext(ctx, method, ts.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s %s: %d, want 200", method, path, resp.StatusCode)
		}
		if method == http.MethodHead && resp.Header.Get("Content-Type") != "text/event-stream" {
			t.Errorf("HEAD %s: Content-Type %q, want text/event-stream", path, resp.Header.Get("Content-Type"))
		}
	}
	waitOpen(t, rt.Runtime, 0)
}

// TestEventsAfterShutdown: once the runtime has shut down the stream
// answers 503 (an EventSource stops reconnecting on it), not an empty 200.
func TestEventsAfterShutdown(t *testing.T) {
	rt := start(t, Options{})
	ts := eventsServer(t, rt.Runtime)
	if err := rt.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	status, body := getEvents(t, ts.Client(), ts.URL)
	if status != http.StatusServiceUnavailable || !strings.Contains(body, "shutting down") {
		t.Errorf("after Shutdown: %d %q, want 503 naming the shutdown", status, body)
	}
}

// TestEventsStreamLimit: at most the cap of streams are served at once;
// one more gets 503 naming the cap, and a place freed is taken again.
func TestEventsStreamLimit(t *testing.T) {
	rt := start(t, Options{})
	rt.stream.most = 2
	ts := eventsServer(t, rt.Runtime)
	first := openEvents(t, ts, "/api/mcp/events", nil)
	openEvents(t, ts, "/api/mcp/events", nil)
	waitOpen(t, rt.Runtime, 2)
	status, body := getEvents(t, ts.Client(), ts.URL)
	if status != http.StatusServiceUnavailable || !strings.Contains(body, "at most 2") {
		t.Errorf("a third stream: %d %q, want 503 naming the cap", status, body)
	}
	first.close()
	waitOpen(t, rt.Runtime, 1)
	openEvents(t, ts, "/api/mcp/events", nil)
}

// flushOnly is a host's wrapper of the ResponseWriter: it flushes but
// has no Unwrap, so no write deadline can be set through it.
type flushOnly struct{ http.ResponseWriter }

func (w flushOnly) Flush() { w.ResponseWriter.(http.Flusher).Flush() }

// TestEventsNeedsDeadlines: behind a writer that takes no write deadline
// (the cut-off of a client that stops reading would be off) the stream
// answers 500 saying what it needs, and opens no stream.
func TestEventsNeedsDeadlines(t *testing.T) {
	rt := start(t, Options{})
	rt.stream.changed = make(chan struct{}, 1)
	h := rt.Handler()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		h.ServeHTTP(flushOnly{w}, req)
	}))
	t.Cleanup(ts.Close)
	t.Cleanup(func() { _ = rt.Shutdown(context.Background()) }) // before ts closes: ends a stream opened anyway
	status, body := getEvents(t, ts.Client(), ts.URL)
	if status != http.StatusInternalServerError || !strings.Contains(body, "write deadlines") {
		t.Errorf("behind a writer without deadlines: %d %q, want 500 naming what the stream needs", status, body)
	}
	waitOpen(t, rt.Runtime, 0)
}

// getEvents requests the stream, expecting an answer that is not one:
// its status and (bounded) body.
func getEvents(t *testing.T, c *http.Client, base string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), eventsWait)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/mcp/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET /api/mcp/events: %v", err)
	}
	defer resp.Body.Close()
	if resp.Header.Get("Content-Type") == "text/event-stream" {
		return resp.StatusCode, "(a stream)"
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	return resp.StatusCode, string(body)
}
