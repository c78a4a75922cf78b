package runtime

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sse "github.com/tmaxmax/go-sse"
)

// Helpers of the event stream tests: a client of GET /api/mcp/events
// that reads frames with go-sse's parser (sse.Read), each read bounded.

// eventsWait bounds every wait of these tests for a frame or a condition.
const eventsWait = 10 * time.Second

// sseFrame is one frame as the client library parsed it, with its data
// decoded.
type sseFrame struct {
	id, typ string
	data    map[string]any
	raw     string
}

func (f sseFrame) num(key string) float64 {
	n, _ := f.data[key].(float64)
	return n
}

func (f sseFrame) str(key string) string {
	s, _ := f.data[key].(string)
	return s
}

// sseClient is one open stream.
type sseClient struct {
	resp   *http.Response
	cancel context.CancelFunc
	next   func() (sse.Event, error, bool)
	stop   func()
}

// openEvents opens path (with its query) on ts with the given headers and
// checks the answer is a stream; the stream is closed when the test ends.
func openEvents(t testing.TB, ts *httptest.Server, path string, header map[string]string) *sseClient {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	opened := time.AfterFunc(eventsWait, cancel)
	resp, err := ts.Client().Do(req)
	opened.Stop()
	if err != nil {
		cancel()
		t.Fatalf("GET %s: %v", path, err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		resp.Body.Close()
		cancel()
		t.Fatalf("GET %s: %d %s, want 200 text/event-stream", path, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	next, stop := iter.Pull2(sse.Read(resp.Body, nil))
	c := &sseClient{resp: resp, cancel: cancel, next: next, stop: stop}
	t.Cleanup(c.close)
	return c
}

// close ends the stream from the client's side.
func (c *sseClient) close() {
	c.cancel()
	c.stop()
	c.resp.Body.Close()
}

// read returns the next n frames, failing the test if they do not come
// within eventsWait.
func (c *sseClient) read(t *testing.T, n int) []sseFrame {
	t.Helper()
	var frames []sseFrame
	for range n {
		f, ok := c.frame(t)
		if !ok {
			t.Fatalf("stream ended after %d frames, want %d: %+v", len(frames), n, frames)
		}
		frames = append(frames, f)
	}
	return frames
}

// frame returns the next frame, or false when the stream has ended.
func (c *sseClient) frame(t *testing.T) (sseFrame, bool) {
	t.Helper()
	timer := time.AfterFunc(eventsWait, c.cancel)
	defer timer.Stop()
	e, err, ok := c.next()
	if !ok {
		return sseFrame{}, false
	}
	if err != nil {
		t.Fatalf("reading the stream: %v", err)
	}
	f := sseFrame{id: e.LastEventID, typ: e.Type, raw: e.Data}
	if err := json.Unmarshal([]byte(e.Data), &f.data); err != nil {
		t.Fatalf("frame data is not a JSON object: %q: %v", e.Data, err)
	}
	return f, true
}

// readUntil reads the stream's bytes (the client library hides comments)
// until they hold n times want, failing the test if the stream ends or
// the bytes do not come within eventsWait.
func (c *sseClient) readUntil(t *testing.T, want string, n int) {
	t.Helper()
	c.stop() // the bytes are read here, not by the parser
	timer := time.AfterFunc(eventsWait, c.cancel)
	defer timer.Stop()
	got := make([]byte, 0, 64)
	buf := make([]byte, 64)
	for strings.Count(string(got), want) < n {
		k, err := c.resp.Body.Read(buf)
		got = append(got, buf[:k]...)
		if err != nil {
			t.Fatalf("after %q: %v, want %q", got, err, want)
		}
	}
}

// ended waits for the stream to end (the server closed it), failing the
// test on any frame.
func (c *sseClient) ended(t *testing.T) {
	t.Helper()
	timer := time.AfterFunc(eventsWait, c.cancel)
	defer timer.Stop()
	e, err, ok := c.next()
	if ok && err == nil {
		t.Fatalf("got a frame %+v, want the end of the stream", e)
	}
	if !timer.Stop() {
		t.Fatalf("the stream did not end within %s", eventsWait)
	}
}

// waitOpen waits until rt serves want event streams.
func waitOpen(t testing.TB, rt *Runtime, want int64) {
	t.Helper()
	timer := time.NewTimer(eventsWait)
	defer timer.Stop()
	for rt.stream.open.Load() != want {
		select {
		case <-rt.stream.changed:
		case <-timer.C:
			t.Fatalf("%d event streams open, want %d", rt.stream.open.Load(), want)
		}
	}
}

// eventsServer serves rt's Handler on a loopback httptest server, set up
// by each of setup before it starts.
func eventsServer(t testing.TB, rt *Runtime, setup ...func(*httptest.Server)) *httptest.Server {
	t.Helper()
	rt.stream.changed = make(chan struct{}, 1)
	ts := httptest.NewUnstartedServer(rt.Handler())
	for _, f := range setup {
		f(ts)
	}
	ts.Start()
	t.Cleanup(ts.Close)
	return ts
}
