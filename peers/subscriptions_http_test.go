//go:build unix

package peers_test

import (
	"context"
	"encoding/json"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	sse "github.com/tmaxmax/go-sse"
)

// everythingOverHTTP is the management API's leg of
// TestEverythingCompletionsAndSubscriptions: completable-prompt's
// completions narrow as the value grows through POST /api/mcp/complete;
// a subscription made with POST /api/mcp/resources/subscriptions brings
// toggle-subscriber-updates' update as a resource_updated frame on GET
// /api/mcp/events, and its DELETE ends it.
func everythingOverHTTP(t *testing.T, rt *testRuntime) {
	ts := httptest.NewServer(rt.Handler())
	t.Cleanup(ts.Close) // after the event stream's (Close waits for it)
	for _, tc := range []struct {
		body string
		want []string
	}{
		{`{"prompt":"everything__completable-prompt","argument":"department","value":""}`, []string{"Engineering", "Sales", "Marketing", "Support"}},
		{`{"prompt":"everything__completable-prompt","argument":"department","value":"S"}`, []string{"Sales", "Support"}},
		{`{"prompt":"everything__completable-prompt","argument":"department","value":"Su"}`, []string{"Support"}},
		{`{"prompt":"everything__completable-prompt","argument":"name","value":"B","context":{"department":"Engineering"}}`, []string{"Bob"}},
	} {
		var got struct {
			Values []string `json:"values"`
		}
		apiDo(t, ts, "POST", "/api/mcp/complete", tc.body, http.StatusOK, &got)
		if !slices.Equal(got.Values, tc.want) {
			t.Errorf("POST /api/mcp/complete %s = %v, want %v", tc.body, got.Values, tc.want)
		}
	}

	frames := openEventStream(t, ts, "/api/mcp/events?server=everything")
	var created struct {
		ID string `json:"id"`
	}
	apiDo(t, ts, "POST", "/api/mcp/resources/subscriptions", `{"server":"everything","uri":"`+subscribedDoc+`"}`, http.StatusCreated, &created)
	if created.ID == "" {
		t.Fatal("no subscription id")
	}
	rt.call(t, "everything__toggle-subscriber-updates", map[string]any{})
	for {
		f, ok := frames()
		if !ok {
			t.Fatal("no resource_updated frame on /api/mcp/events")
		}
		if f.Type != "resource_updated" {
			continue
		}
		var data struct{ Server, URI string }
		if err := json.Unmarshal([]byte(f.Data), &data); err != nil || data.Server != "everything" || data.URI != subscribedDoc {
			t.Fatalf("frame %s, want the update of %s on everything", f.Data, subscribedDoc)
		}
		break
	}
	rt.call(t, "everything__toggle-subscriber-updates", map[string]any{}) // off again
	apiDo(t, ts, "DELETE", "/api/mcp/resources/subscriptions/"+created.ID, "{}", http.StatusNoContent, nil)
	apiDo(t, ts, "DELETE", "/api/mcp/resources/subscriptions/"+created.ID, "{}", http.StatusNotFound, nil)
}

// apiDo sends one request to the management API and decodes its answer
// into out (if set), failing the test on another status.
func apiDo(t *testing.T, ts *httptest.Server, method, path, body string, want int, out any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, ts.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != want {
		t.Fatalf("%s %s = %d %s (%v), want %d", method, path, resp.StatusCode, data, err, want)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: decoding %s: %v", method, path, data, err)
		}
	}
}

// openEventStream opens the event stream at path and returns its frames,
// parsed by go-sse, one per call; false when the stream ended or no frame
// came within toolsTimeout. The stream is closed when the test ends.
func openEventStream(t *testing.T, ts *httptest.Server, path string) func() (sse.Event, bool) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := ts.Client().Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		cancel()
		t.Fatalf("GET %s: %v %v", path, resp, err)
	}
	next, stop := iter.Pull2(sse.Read(resp.Body, nil))
	t.Cleanup(func() { cancel(); stop(); resp.Body.Close() })
	return func() (sse.Event, bool) {
		timer := time.AfterFunc(toolsTimeout, cancel)
		defer timer.Stop()
		e, err, ok := next()
		return e, ok && err == nil
	}
}
