package mcpconn

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// listenRequest is a subscriptions/listen request for uris.
func listenRequest(t *testing.T, id int64, uris ...string) *jsonrpc.Request {
	t.Helper()
	params, err := json.Marshal(map[string]any{"notifications": map[string]any{"resourceSubscriptions": uris}})
	if err != nil {
		t.Fatal(err)
	}
	return &jsonrpc.Request{ID: rid(id), Method: methodListen, Params: params}
}

// cancelRequest is the notifications/cancelled of request id.
func cancelRequest(id int64) *jsonrpc.Request {
	return &jsonrpc.Request{Method: methodCancelled, Params: json.RawMessage(`{"requestId":` + jsonInt(id) + `,"reason":"unsubscribed"}`)}
}

func jsonInt(n int64) string { b, _ := json.Marshal(n); return string(b) }

// TestListenTrackerEnds: the end of a listen for resource URIs is told
// once per URI; not for a listen cancelled from here (Unsubscribe), nor
// for an older listen of a URI that has a newer one, nor for listens
// without resource URIs (the SDK's list_changed stream); ends seen before
// the Conn exists are told when it attaches, and none after close.
func TestListenTrackerEnds(t *testing.T) {
	tr := newListenTracker()
	var told []string
	tr.sent(listenRequest(t, 1, "a", "b"))
	tr.ended(rid(1)) // before attach: kept
	tr.attach(func(uri string) { told = append(told, uri) })
	if strings.Join(told, ",") != "a,b" {
		t.Fatalf("ends before attach told as %v, want a,b", told)
	}
	told = nil

	tr.sent(listenRequest(t, 2, "a"))
	tr.sent(cancelRequest(2)) // Unsubscribe
	tr.ended(rid(2))

	tr.sent(listenRequest(t, 3, "a"))
	tr.sent(listenRequest(t, 4, "a")) // reopened meanwhile
	tr.ended(rid(3))

	tr.sent(&jsonrpc.Request{ID: rid(5), Method: methodListen, Params: json.RawMessage(`{"notifications":{"toolsListChanged":true}}`)})
	tr.ended(rid(5))
	tr.ended(rid(99)) // any other answer
	if len(told) != 0 {
		t.Fatalf("told %v, want nothing", told)
	}
	tr.ended(rid(4))
	tr.ended(rid(4))
	if strings.Join(told, ",") != "a" {
		t.Fatalf("told %v, want a once", told)
	}
	tr.sent(listenRequest(t, 6, "a"))
	tr.close()
	tr.ended(rid(6))
	if len(told) != 1 {
		t.Fatalf("told %v after close", told)
	}
}

// roundTripFunc is an http.RoundTripper.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestListenRoundTripperEnds: over Streamable HTTP a listen's refused
// POST and the end of its response stream are ends; a stream whose
// request the SDK cancelled (Unsubscribe, Close) is not.
func TestListenRoundTripperEnds(t *testing.T) {
	for _, tc := range []struct {
		name     string
		status   int
		cancel   bool // the SDK cancels the request before the stream ends
		wantEnds int
	}{{"refused", http.StatusBadRequest, false, 1}, {"stream over", http.StatusOK, false, 1}, {"cancelled", http.StatusOK, true, 0}} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newListenTracker()
			ends := 0
			tr.attach(func(string) { ends++ })
			rt := listenRoundTripper{tracker: tr, base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				return &http.Response{StatusCode: tc.status, Body: io.NopCloser(strings.NewReader("event: message\n\n")), Request: r}, nil
			})}
			body, err := jsonrpc.EncodeMessage(listenRequest(t, 1, "a"))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(string(body)))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := rt.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			if tc.cancel {
				cancel()
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if ends != tc.wantEnds {
				t.Fatalf("%d ends, want %d", ends, tc.wantEnds)
			}
		})
	}
}

// rid is the JSON-RPC id n.
func rid(n int64) jsonrpc.ID {
	id, _ := jsonrpc.MakeID(float64(n))
	return id
}
