package runtime

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/openprogram/mcpvisor/internal/mcpconn"
	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/internal/testutil/oauthfake"
	"github.com/openprogram/mcpvisor/status"
)

// apiHits serves a runtime's Handler on loopback and records what it
// answered to each request.
type apiHits struct {
	mu    sync.Mutex
	codes []int
}

func (h *apiHits) serve(t *testing.T, next http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &codeRecorder{ResponseWriter: w, code: http.StatusOK}
		next.ServeHTTP(rec, r)
		h.mu.Lock()
		h.codes = append(h.codes, rec.code)
		h.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	return srv
}

func (h *apiHits) answers() []int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]int(nil), h.codes...)
}

type codeRecorder struct {
	http.ResponseWriter
	code int
}

func (r *codeRecorder) WriteHeader(code int) {
	r.code = code
	r.ResponseWriter.WriteHeader(code)
}

// A hostile authorization server names the runtime's own management API
// as its registration or token endpoint. The runtime's requests carry its
// mark, so Handler refuses them: the victim is never restarted, and the
// oauth server ends in a clear error.
func TestOAuthEndpointOnOwnAPIRefused(t *testing.T) {
	for _, tc := range []struct {
		name     string
		field    string
		clientID string // set: no registration, straight to the token endpoint
	}{
		{"registration", "registration_endpoint", ""},
		{"token", "token_endpoint", oauthfake.ClientID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			as := oauthfake.New(t)
			hostile := as.Config("hostile")
			hostile.Auth.ClientID = tc.clientID
			if tc.clientID != "" {
				hostile.Auth.ClientSecret = oauthfake.SecretMarker
			}
			rt := start(t, Options{OpenURL: (&browser{}).open}, exampleServer("victim"))
			victim := rt.waitFor(t, "victim", status.Ready)
			var hits apiHits
			api := hits.serve(t, rt.Handler())
			as.With(func(a *oauthfake.State) {
				a.Endpoints = map[string]string{tc.field: api.URL + "/api/mcp/servers/victim/restart"}
			})
			rt.AddServer(context.Background(), hostile) // its answer is the state below
			st := rt.waitFor(t, "hostile", status.Failed, status.NeedsAuth, status.Backoff)
			if !strings.Contains(st.Error+st.LastError, "403") && !strings.Contains(st.Error+st.LastError, "Forbidden") {
				t.Errorf("hostile ended with %q / %q, want the refusal (403)", st.Error, st.LastError)
			}
			answers := hits.answers()
			if len(answers) == 0 {
				t.Fatal("the API was never reached: the test proves nothing")
			}
			for _, code := range answers {
				if code != http.StatusForbidden {
					t.Errorf("the API answered %d to a request of the runtime, want 403", code)
				}
			}
			if now, _ := rt.board.Get("victim"); now.PID != victim.PID || now.Restarts != victim.Restarts {
				t.Errorf("victim restarted: pid %d -> %d, restarts %d -> %d", victim.PID, now.PID, victim.Restarts, now.Restarts)
			}
			noLeaks(t, rt)
		})
	}
}

// Handler refuses the mark whatever its value: another runtime's requests
// are refused too.
func TestHandlerRefusesMarkedRequests(t *testing.T) {
	rt := start(t, Options{})
	for _, value := range []string{rt.id, "mcpvisor-someone-else", ""} {
		req := httptest.NewRequest("GET", "/api/mcp/servers", nil)
		req.Header[mcpconn.RequestMarkHeader] = []string{value}
		w := httptest.NewRecorder()
		rt.Handler().ServeHTTP(w, req)
		if w.Code != http.StatusForbidden || !strings.Contains(w.Body.String(), `"error"`) || !strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") {
			t.Errorf("mark %q: %d %s, want a 403 JSON error", value, w.Code, w.Body)
		}
	}
}

// An OAuth endpoint on a private or loopback address other than the MCP
// server's host is refused where the connection is made (nothing reaches
// it), unless Options.AllowPrivateOAuthHosts says otherwise. The server's
// own host (every other OAuth test here) is allowed.
func TestOAuthEndpointOnAnotherPrivateHost(t *testing.T) {
	for _, allow := range []bool{false, true} {
		t.Run(fmt.Sprintf("allow=%v", allow), func(t *testing.T) {
			as := oauthfake.New(t)
			// 127.0.0.2: another loopback address than the MCP server's.
			token, conns := testutil.OtherLoopback(t, as.TokenHandler())
			token += "/token"
			as.With(func(a *oauthfake.State) { a.Endpoints = map[string]string{"token_endpoint": token} })
			srv := as.Config("web")
			srv.Auth.ClientID, srv.Auth.ClientSecret = oauthfake.ClientID, oauthfake.SecretMarker
			rt := start(t, Options{OpenURL: (&browser{}).open, AllowPrivateOAuthHosts: allow}, srv)
			st := rt.waitFor(t, "web", status.Ready, status.Failed, status.NeedsAuth, status.Backoff)
			if allow {
				if st.State != status.Ready || conns.Load() == 0 {
					t.Fatalf("allowed: web = %+v, %d connections to the token endpoint", st, conns.Load())
				}
				return
			}
			if st.State == status.Ready || !strings.Contains(st.Error, "127.0.0.2") || !strings.Contains(st.Error, "private address") {
				t.Errorf("web = %s %q, want it refused naming 127.0.0.2", st.State, st.Error)
			}
			if n := conns.Load(); n != 0 {
				t.Errorf("the token endpoint on 127.0.0.2 got %d connections", n)
			}
			noLeaks(t, rt)
		})
	}
}
