package runtime

import (
	"context"
	"net/http"
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
