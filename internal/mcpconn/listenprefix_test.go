package mcpconn

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// bigToolCall is the SDK's encoding of a tools/call POST with an
// argument of size bytes.
func bigToolCall(tb testing.TB, size int) []byte {
	tb.Helper()
	body, err := jsonrpc.EncodeMessage(&jsonrpc.Request{ID: rid(7), Method: "tools/call",
		Params: []byte(`{"name":"x","arguments":{"blob":"` + strings.Repeat("a", size) + `"}}`)})
	if err != nil {
		tb.Fatal(err)
	}
	return body
}

// okRoundTripper answers every request 200 with an empty body.
var okRoundTripper = roundTripFunc(func(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(strings.NewReader("")), Request: r}, nil
})

func postThrough(tb testing.TB, rt http.RoundTripper, body []byte) {
	tb.Helper()
	req, err := http.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", bytes.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		tb.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

// TestListenWatchSkipsOtherPOSTs: the listen watch reads a prefix of a
// POST that is not a listen, never its whole body: a 4 MiB tools/call
// costs it far less than its size.
func TestListenWatchSkipsOtherPOSTs(t *testing.T) {
	const size, rounds = 4 << 20, 10
	body := bigToolCall(t, size)
	rt := listenRoundTripper{tracker: newListenTracker(), base: okRoundTripper}
	postThrough(t, rt, body) // warm up
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range rounds {
		postThrough(t, rt, body)
	}
	runtime.ReadMemStats(&after)
	if perPOST := (after.TotalAlloc - before.TotalAlloc) / rounds; perPOST > size/16 {
		t.Fatalf("the listen watch allocated %d bytes per %d-byte tools/call POST; want a bounded prefix", perPOST, len(body))
	}
}

// TestListenWatchReadsLongListens: a listen longer than the prefix read
// of every POST is still seen whole (its URIs are all tracked).
func TestListenWatchReadsLongListens(t *testing.T) {
	var uris []string
	for i := range 64 {
		uris = append(uris, fmt.Sprintf("mem://a-long-resource-uri-%d", i))
	}
	body, err := jsonrpc.EncodeMessage(listenRequest(t, 1, uris...))
	if err != nil {
		t.Fatal(err)
	}
	if len(body) <= listenPrefix {
		t.Fatalf("the listen is %d bytes, not longer than the prefix", len(body))
	}
	tr := newListenTracker()
	var ended []string
	tr.attach(func(uri string) { ended = append(ended, uri) })
	postThrough(t, listenRoundTripper{tracker: tr, base: okRoundTripper}, body)
	if strings.Join(ended, ",") != strings.Join(uris, ",") {
		t.Fatalf("ends of %v; want all %d URIs", ended, len(uris))
	}
}

// BenchmarkListenWatchBigPOST is the listen watch's cost on a 16 MiB
// tools/call POST (go test -bench ListenWatch -benchmem).
func BenchmarkListenWatchBigPOST(b *testing.B) {
	body := bigToolCall(b, 16<<20)
	rt := listenRoundTripper{tracker: newListenTracker(), base: okRoundTripper}
	b.ReportAllocs()
	for b.Loop() {
		postThrough(b, rt, body)
	}
}
