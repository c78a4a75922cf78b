package mcpconn

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"golang.org/x/oauth2"
)

// failingAuth is an OAuth handler whose Authorize fails.
type failingAuth struct{}

func (failingAuth) TokenSource(context.Context) (oauth2.TokenSource, error) { return nil, nil }
func (failingAuth) Authorize(_ context.Context, _ *http.Request, resp *http.Response) error {
	resp.Body.Close()
	return errors.New("refused")
}

// TestListenWatchWaitsOutAuthorize: over Streamable HTTP with an OAuth
// handler, a listen refused with 401 is not an end, since the SDK
// authorizes and sends it again (same id, through the same round
// tripper); the end of the retried stream is. A retry refused again, or
// an Authorize that fails, is an end. Without an OAuth handler a 401 is
// an end at once.
func TestListenWatchWaitsOutAuthorize(t *testing.T) {
	for _, tc := range []struct {
		name     string
		oauth    bool
		statuses []int // of each POST of the listen
		failAuth bool  // Authorize fails after the first refusal
		want     []int // ends after each POST
	}{
		{"retried", true, []int{http.StatusUnauthorized, http.StatusOK}, false, []int{0, 1}},
		{"forbidden then retried", true, []int{http.StatusForbidden, http.StatusOK}, false, []int{0, 1}},
		{"retry refused", true, []int{http.StatusUnauthorized, http.StatusUnauthorized}, false, []int{0, 1}},
		{"authorize fails", true, []int{http.StatusUnauthorized}, true, []int{1}},
		{"no oauth", false, []int{http.StatusUnauthorized}, false, []int{1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newListenTracker()
			ends := 0
			tr.attach(func(string) { ends++ })
			var status int
			rt := listenRoundTripper{tracker: tr, oauth: tc.oauth, base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				return &http.Response{StatusCode: status, Body: io.NopCloser(strings.NewReader("")), Request: r}, nil
			})}
			body, err := jsonrpc.EncodeMessage(listenRequest(t, 1, "a"))
			if err != nil {
				t.Fatal(err)
			}
			for i, st := range tc.statuses {
				status = st
				req, err := http.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(string(body)))
				if err != nil {
					t.Fatal(err)
				}
				resp, err := rt.RoundTrip(req)
				if err != nil {
					t.Fatal(err)
				}
				if tc.failAuth {
					_ = listenAuth{OAuthHandler: failingAuth{}, tracker: tr}.Authorize(context.Background(), req, resp)
				} else {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				if ends != tc.want[i] {
					t.Fatalf("after POST %d (%d): %d ends, want %d", i+1, st, ends, tc.want[i])
				}
			}
		})
	}
}
