package oauthflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"golang.org/x/oauth2"

	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/redact"
	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/tokenstore"
)

// tokWait bounds the waits of these tests; none asserts on speed.
const tokWait = 10 * time.Second

// Planted markers: none may show up in an error string.
const (
	tokOldAccess   = "MARKER-OLD-ACCESS-9d1e"
	tokOldRefresh  = "MARKER-OLD-REFRESH-5b7c"
	tokBodyMarker  = "MARKER-BODY-TEXT-3a0f"
	tokBodyMarker2 = "MARKER-BODY-FIELD-e21d"
)

// Modes of the test token endpoint.
const (
	tokOK       = "ok"       // a new token
	tokRefuse   = "refuse"   // 400 invalid_grant
	tokUnauth   = "unauth"   // 400 unauthorized_client
	tok500      = "500"      // 500 with a text body
	tok500JSON  = "500json"  // 500 with an error object
	tokBadReq   = "badreq"   // 400 invalid_request echoing the refresh token
	tokNoRotate = "norotate" // a new access token without a refresh token
)

// tokEndpoint is a token endpoint that counts refresh_token grants.
type tokEndpoint struct {
	url       string // the token URL
	mode      atomic.Value
	expiresIn atomic.Int64
	refreshes atomic.Int32
	others    atomic.Int32 // requests that are not refresh grants

	mu      sync.Mutex
	sentRTs []string  // the refresh tokens received
	hitAt   time.Time // when the last refresh grant arrived
}

func tokNewEndpoint(t *testing.T) *tokEndpoint {
	t.Helper()
	ep := &tokEndpoint{}
	ep.mode.Store(tokOK)
	ep.expiresIn.Store(3600)
	srv := httptest.NewServer(http.HandlerFunc(ep.serve))
	ep.url = srv.URL + "/token"
	t.Cleanup(func() {
		srv.Close()
		if n := ep.others.Load(); n != 0 {
			t.Errorf("token endpoint got %d requests that were not refresh grants", n)
		}
	})
	return ep
}

func (ep *tokEndpoint) setMode(m string) { ep.mode.Store(m) }

func (ep *tokEndpoint) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/token" || r.ParseForm() != nil || r.PostForm.Get("grant_type") != "refresh_token" {
		ep.others.Add(1)
		http.Error(w, "unexpected request", http.StatusBadRequest)
		return
	}
	n := ep.refreshes.Add(1)
	rt := r.PostForm.Get("refresh_token")
	ep.mu.Lock()
	ep.sentRTs = append(ep.sentRTs, rt)
	ep.hitAt = time.Now()
	ep.mu.Unlock()
	jsonAnswer := func(status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(v)
	}
	switch ep.mode.Load().(string) {
	case tokOK, tokNoRotate:
		v := map[string]any{
			"access_token": fmt.Sprintf("new-access-%d", n),
			"token_type":   "Bearer",
			"expires_in":   ep.expiresIn.Load(),
		}
		if ep.mode.Load() == tokOK {
			v["refresh_token"] = fmt.Sprintf("new-refresh-%d", n)
		}
		jsonAnswer(http.StatusOK, v)
	case tokRefuse:
		jsonAnswer(http.StatusBadRequest, map[string]any{"error": "invalid_grant", "debug": tokBodyMarker2 + " " + rt})
	case tokUnauth:
		jsonAnswer(http.StatusBadRequest, map[string]any{"error": "unauthorized_client", "debug": tokBodyMarker2})
	case tok500:
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprintf(w, "%s: could not refresh %s", tokBodyMarker, rt)
	case tok500JSON:
		jsonAnswer(http.StatusInternalServerError, map[string]any{"error": "server_error", "debug": tokBodyMarker2 + " " + rt})
	case tokBadReq:
		jsonAnswer(http.StatusBadRequest, map[string]any{
			"error":             "invalid_request",
			"error_description": "malformed refresh_token " + rt + " of client " + r.PostForm.Get("client_secret"),
			"debug":             tokBodyMarker2,
		})
	}
}

func (ep *tokEndpoint) lastRT() string {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if len(ep.sentRTs) == 0 {
		return ""
	}
	return ep.sentRTs[len(ep.sentRTs)-1]
}

// tokRecorder records the saved and refused callbacks of a source.
type tokRecorder struct {
	mu      sync.Mutex
	saved   []*oauth2.Token
	refused []error
	savedCh chan *oauth2.Token
	refCh   chan error
}

func (r *tokRecorder) savedN() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.saved)
}

func (r *tokRecorder) refusedN() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.refused)
}

// tokSource builds a source the way AuthCode.newSource does, with an HTTP
// client of its own (closed at cleanup) and the client authenticating in
// the form, so that one refresh is one request (oauth2 probes the other
// style after an error otherwise).
func tokSource(t *testing.T, ep *tokEndpoint, tok *oauth2.Token) (*tokenSource, *tokRecorder) {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	oc := &oauth2.Config{
		ClientID:     "client-1",
		ClientSecret: "client-secret-1",
		Endpoint:     oauth2.Endpoint{TokenURL: ep.url, AuthStyle: oauth2.AuthStyleInParams},
	}
	rec := &tokRecorder{savedCh: make(chan *oauth2.Token, 16), refCh: make(chan error, 16)}
	src := &tokenSource{
		oc:    oc,
		ctx:   context.WithValue(context.Background(), oauth2.HTTPClient, &http.Client{Transport: tr}),
		tok:   tok,
		scrub: redact.New(),
		// Obtained an hour ago: a token near its expiry is refreshed on use.
		obtained: time.Now().Add(-time.Hour),
		saved: func(got *oauth2.Config, tok *oauth2.Token) {
			if got != oc {
				t.Errorf("saved got another oauth2.Config")
			}
			rec.mu.Lock()
			rec.saved = append(rec.saved, tok)
			rec.mu.Unlock()
			rec.savedCh <- tok
		},
		refused: func(err error) {
			rec.mu.Lock()
			rec.refused = append(rec.refused, err)
			rec.mu.Unlock()
			rec.refCh <- err
		},
	}
	return src, rec
}

func tokToken(expiresIn time.Duration, refresh string) *oauth2.Token {
	tok := &oauth2.Token{AccessToken: tokOldAccess, TokenType: "Bearer", RefreshToken: refresh}
	if expiresIn != 0 {
		tok.Expiry = time.Now().Add(expiresIn)
	}
	return tok
}

// tokAssertClean checks that err shows no token and no response body.
func tokAssertClean(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	msg := err.Error()
	for _, m := range []string{tokOldAccess, tokOldRefresh, tokBodyMarker, tokBodyMarker2, "new-access-", "new-refresh-", "client-secret-1"} {
		if strings.Contains(msg, m) {
			t.Errorf("error %q contains %q", msg, m)
		}
	}
}

func TestTokenValidNoRequest(t *testing.T) {
	for name, tok := range map[string]*oauth2.Token{
		"expires in an hour":          tokToken(time.Hour, tokOldRefresh),
		"no expiry":                   tokToken(0, tokOldRefresh),
		"no expiry, no refresh token": tokToken(0, ""),
	} {
		t.Run(name, func(t *testing.T) {
			ep := tokNewEndpoint(t)
			src, rec := tokSource(t, ep, tok)
			for range 3 {
				got, err := src.Token()
				if err != nil || got != tok {
					t.Fatalf("Token() = %v, %v; want the stored token", got, err)
				}
			}
			if n := ep.refreshes.Load(); n != 0 {
				t.Fatalf("%d refreshes for a valid token", n)
			}
			if rec.savedN() != 0 || rec.refusedN() != 0 {
				t.Fatalf("saved %d, refused %d; want none", rec.savedN(), rec.refusedN())
			}
		})
	}
}

// A token within expiryDelta of its expiry is refreshed on use, and the
// new one is saved and used from then on.
func TestTokenNearExpiryRefreshed(t *testing.T) {
	ep := tokNewEndpoint(t)
	src, rec := tokSource(t, ep, tokToken(5*time.Second, tokOldRefresh))

	got, err := src.Token()
	if err != nil {
		t.Fatal(err)
	}
	if got.AccessToken != "new-access-1" || got.RefreshToken != "new-refresh-1" {
		t.Fatalf("Token() = %q/%q, want the refreshed token", got.AccessToken, got.RefreshToken)
	}
	if until := time.Until(got.Expiry); until < 50*time.Minute {
		t.Fatalf("refreshed token expires in %s, want about an hour (expires_in 3600)", until)
	}
	if n := ep.refreshes.Load(); n != 1 {
		t.Fatalf("%d refreshes, want 1", n)
	}
	if rt := ep.lastRT(); rt != tokOldRefresh {
		t.Fatalf("refresh sent refresh token %q, want the stored one", rt)
	}
	if rec.savedN() != 1 || rec.saved[0] != got {
		t.Fatalf("saved %v, want exactly the new token", rec.saved)
	}
	// The new token is used without another request.
	again, err := src.Token()
	if err != nil || again != got {
		t.Fatalf("second Token() = %v, %v; want the refreshed token", again, err)
	}
	if n := ep.refreshes.Load(); n != 1 {
		t.Fatalf("%d refreshes after a second Token(), want 1", n)
	}
	if rec.refusedN() != 0 {
		t.Fatal("refused called on a successful refresh")
	}
}

// A refresh answer without a refresh token keeps the old one.
func TestTokenRefreshKeepsRefreshToken(t *testing.T) {
	ep := tokNewEndpoint(t)
	ep.setMode(tokNoRotate)
	src, rec := tokSource(t, ep, tokToken(-time.Minute, tokOldRefresh))
	got, err := src.Token()
	if err != nil {
		t.Fatal(err)
	}
	if got.AccessToken != "new-access-1" || got.RefreshToken != tokOldRefresh {
		t.Fatalf("Token() = %q/%q, want a new access token and the old refresh token", got.AccessToken, got.RefreshToken)
	}
	if rec.savedN() != 1 || rec.saved[0].RefreshToken != tokOldRefresh {
		t.Fatal("the saved token lost its refresh token")
	}
}

// A refused refresh ends the login: ErrNeedsReauth, refused once, and no
// further requests.
func TestTokenRefusedNeedsReauth(t *testing.T) {
	for _, mode := range []string{tokRefuse, tokUnauth} {
		t.Run(mode, func(t *testing.T) {
			ep := tokNewEndpoint(t)
			ep.setMode(mode)
			src, rec := tokSource(t, ep, tokToken(time.Second, tokOldRefresh))

			tok, err := src.Token()
			if !errors.Is(err, ErrNeedsReauth) || tok != nil {
				t.Fatalf("Token() = %v, %v; want ErrNeedsReauth", tok, err)
			}
			tokAssertClean(t, err)
			if n := ep.refreshes.Load(); n != 1 {
				t.Fatalf("%d refreshes, want 1", n)
			}
			if rec.refusedN() != 1 || !errors.Is(rec.refused[0], ErrNeedsReauth) {
				t.Fatalf("refused calls %v, want one with ErrNeedsReauth", rec.refused)
			}
			if src.refusal() != err {
				t.Fatalf("refusal() = %v, want %v", src.refusal(), err)
			}
			// Even if the endpoint would now answer, the login stays over.
			ep.setMode(tokOK)
			for range 3 {
				_, again := src.Token()
				if again != err {
					t.Fatalf("later Token() = %v, want the same error %v", again, err)
				}
			}
			if again := src.refreshNow(); again != err {
				t.Fatalf("refreshNow() = %v, want %v", again, err)
			}
			for _, final := range []bool{false, true} {
				if again := src.rejected(final); again != err {
					t.Fatalf("rejected(%t) = %v, want %v", final, again, err)
				}
			}
			if n := ep.refreshes.Load(); n != 1 {
				t.Fatalf("%d refreshes after the refusal, want 1", n)
			}
			if rec.refusedN() != 1 || rec.savedN() != 0 {
				t.Fatalf("refused %d, saved %d; want 1 and 0", rec.refusedN(), rec.savedN())
			}
			if _, _, ok := src.nextRefresh(); ok {
				t.Fatal("nextRefresh wants to refresh a refused login")
			}
		})
	}
}

func TestTokenExpiredWithoutRefreshToken(t *testing.T) {
	ep := tokNewEndpoint(t)
	src, rec := tokSource(t, ep, tokToken(-time.Minute, ""))
	tok, err := src.Token()
	if !errors.Is(err, ErrNeedsReauth) || tok != nil {
		t.Fatalf("Token() = %v, %v; want ErrNeedsReauth", tok, err)
	}
	tokAssertClean(t, err)
	if n := ep.refreshes.Load(); n != 0 {
		t.Fatalf("%d refreshes without a refresh token", n)
	}
	if rec.refusedN() != 1 {
		t.Fatalf("refused called %d times, want 1", rec.refusedN())
	}
	if _, again := src.Token(); again != err {
		t.Fatalf("later Token() = %v, want %v", again, err)
	}
	if rec.refusedN() != 1 {
		t.Fatalf("refused called %d times after a second Token(), want 1", rec.refusedN())
	}
}

// A server error is transient: not ErrNeedsReauth, the login is not
// ended, and the next Token() tries again.
func TestTokenTransientFailure(t *testing.T) {
	for _, mode := range []string{tok500, tok500JSON} {
		t.Run(mode, func(t *testing.T) {
			ep := tokNewEndpoint(t)
			ep.setMode(mode)
			src, rec := tokSource(t, ep, tokToken(time.Second, tokOldRefresh))

			tok, err := src.Token()
			if err == nil || tok != nil {
				t.Fatalf("Token() = %v, %v; want an error", tok, err)
			}
			if errors.Is(err, ErrNeedsReauth) {
				t.Fatalf("err = %v: a 500 must not need a login", err)
			}
			if !strings.Contains(err.Error(), "500") {
				t.Errorf("err = %v, want it to name the status", err)
			}
			tokAssertClean(t, err)
			if rec.refusedN() != 0 || src.refusal() != nil {
				t.Fatal("a transient failure ended the login")
			}
			if _, _, ok := src.nextRefresh(); !ok {
				t.Fatal("the refresher gave up after a transient failure")
			}

			ep.setMode(tokOK)
			tok, err = src.Token()
			if err != nil || tok.AccessToken != "new-access-2" {
				t.Fatalf("Token() after recovery = %v, %v; want new-access-2", tok, err)
			}
			if rt := ep.lastRT(); rt != tokOldRefresh {
				t.Fatalf("retry sent %q, want the stored refresh token", rt)
			}
			if rec.savedN() != 1 {
				t.Fatalf("saved %d times, want 1", rec.savedN())
			}
		})
	}
}

// No error of a failed refresh shows a token, a secret or the endpoint's
// response body, whatever the endpoint answers.
func TestTokenErrorsHideSecrets(t *testing.T) {
	for _, mode := range []string{tokRefuse, tokUnauth, tok500, tok500JSON, tokBadReq} {
		t.Run(mode, func(t *testing.T) {
			ep := tokNewEndpoint(t)
			ep.setMode(mode)
			src, _ := tokSource(t, ep, tokToken(time.Second, tokOldRefresh))
			_, err := src.Token()
			if err == nil {
				t.Fatal("no error")
			}
			tokAssertClean(t, err)

			src, _ = tokSource(t, ep, tokToken(time.Hour, tokOldRefresh))
			err = src.rejected(false)
			if err == nil {
				t.Fatal("rejected: no error")
			}
			tokAssertClean(t, err)

			src, _ = tokSource(t, ep, tokToken(time.Hour, tokOldRefresh))
			err = src.refreshNow()
			if err == nil {
				t.Fatal("refreshNow: no error")
			}
			tokAssertClean(t, err)
		})
	}
}

func TestRejected(t *testing.T) {
	// A refused refresh ends the login even when not final: a new login
	// now would be a browser the user did not ask for.
	t.Run("refused, not final", func(t *testing.T) {
		ep := tokNewEndpoint(t)
		ep.setMode(tokRefuse)
		src, rec := tokSource(t, ep, tokToken(time.Hour, tokOldRefresh))
		err := src.rejected(false)
		if !errors.Is(err, ErrNeedsReauth) {
			t.Fatalf("rejected(false) = %v, want ErrNeedsReauth", err)
		}
		tokAssertClean(t, err)
		if rec.refusedN() != 1 || src.refusal() != err {
			t.Fatalf("refused %d times, refusal %v; want the login ended once", rec.refusedN(), src.refusal())
		}
		if _, again := src.Token(); again != err {
			t.Fatalf("Token() = %v, want %v", again, err)
		}
		if ep.refreshes.Load() != 1 {
			t.Fatalf("%d refreshes, want 1", ep.refreshes.Load())
		}
	})
	t.Run("refused, final", func(t *testing.T) {
		ep := tokNewEndpoint(t)
		ep.setMode(tokRefuse)
		src, rec := tokSource(t, ep, tokToken(time.Hour, tokOldRefresh))
		err := src.rejected(true)
		if !errors.Is(err, ErrNeedsReauth) {
			t.Fatalf("rejected(true) = %v, want ErrNeedsReauth", err)
		}
		if rec.refusedN() != 1 {
			t.Fatalf("refused called %d times, want 1", rec.refusedN())
		}
		if _, again := src.Token(); again != err {
			t.Fatalf("Token() = %v, want %v", again, err)
		}
		if ep.refreshes.Load() != 1 {
			t.Fatalf("%d refreshes, want 1", ep.refreshes.Load())
		}
	})
	t.Run("refreshed", func(t *testing.T) {
		ep := tokNewEndpoint(t)
		src, rec := tokSource(t, ep, tokToken(time.Hour, tokOldRefresh))
		if err := src.rejected(true); err != nil {
			t.Fatalf("rejected(true) = %v, want a refresh", err)
		}
		if rec.savedN() != 1 || rec.saved[0].AccessToken != "new-access-1" {
			t.Fatalf("saved %v, want the new token", rec.saved)
		}
		got, err := src.Token()
		if err != nil || got.AccessToken != "new-access-1" {
			t.Fatalf("Token() = %v, %v; want new-access-1", got, err)
		}
		if ep.refreshes.Load() != 1 {
			t.Fatalf("%d refreshes, want 1", ep.refreshes.Load())
		}
	})
	t.Run("no refresh token", func(t *testing.T) {
		ep := tokNewEndpoint(t)
		src, rec := tokSource(t, ep, tokToken(time.Hour, ""))
		err := src.rejected(false)
		if !errors.Is(err, ErrNeedsReauth) || rec.refusedN() != 0 || src.refusal() != nil {
			t.Fatalf("rejected(false) = %v, refused %d; want ErrNeedsReauth and no refusal", err, rec.refusedN())
		}
		// Not final: the caller may log in again; the token stays.
		if _, err := src.Token(); err != nil {
			t.Fatalf("Token() = %v after rejected(false)", err)
		}
		err = src.rejected(true)
		if !errors.Is(err, ErrNeedsReauth) || rec.refusedN() != 1 {
			t.Fatalf("rejected(true) = %v, refused %d; want ErrNeedsReauth and one refusal", err, rec.refusedN())
		}
		if ep.refreshes.Load() != 0 {
			t.Fatalf("%d refreshes without a refresh token", ep.refreshes.Load())
		}
	})
	t.Run("server error", func(t *testing.T) {
		ep := tokNewEndpoint(t)
		ep.setMode(tok500)
		src, rec := tokSource(t, ep, tokToken(time.Hour, tokOldRefresh))
		err := src.rejected(true)
		if err == nil || errors.Is(err, ErrNeedsReauth) {
			t.Fatalf("rejected(true) = %v, want a transient error", err)
		}
		if rec.refusedN() != 0 || src.refusal() != nil {
			t.Fatal("a transient failure ended the login")
		}
	})
}

// A retired source (its connection is closing) still answers with the
// token it has, but refreshes, stores and reports nothing.
func TestRetireStopsSaves(t *testing.T) {
	ep := tokNewEndpoint(t)
	src, rec := tokSource(t, ep, tokToken(time.Second, tokOldRefresh))
	if _, _, ok := src.nextRefresh(); !ok {
		t.Fatal("nextRefresh: nothing to refresh before retire")
	}
	_, changed, _ := src.nextRefresh()
	src.retire()
	select {
	case <-changed:
	default:
		t.Fatal("retire did not signal the refresher")
	}
	if _, _, ok := src.nextRefresh(); ok {
		t.Fatal("nextRefresh wants to refresh a retired source")
	}
	got, err := src.Token()
	if err != nil || got.AccessToken != tokOldAccess {
		t.Fatalf("Token() = %v, %v; want the token as it is", got, err)
	}
	ep.setMode(tokRefuse)
	if err := src.rejected(true); !errors.Is(err, ErrNeedsReauth) {
		t.Fatalf("rejected(true) = %v, want ErrNeedsReauth", err)
	}
	// (This source's context is not one retire can cancel, so the refused
	// refresh reached the endpoint; it must still not be stored or reported.)
	if rec.savedN() != 0 || rec.refusedN() != 0 {
		t.Fatalf("a retired source saved (%d) or reported (%d)", rec.savedN(), rec.refusedN())
	}
}

func TestNextRefreshLead(t *testing.T) {
	ep := tokNewEndpoint(t)
	for _, tc := range []struct {
		lifetime, lead time.Duration
	}{
		{2 * time.Second, time.Second},      // never in the first half
		{8 * time.Second, 4 * time.Second},  // never in the first half
		{20 * time.Second, 5 * time.Second}, // at least 5 s
		{time.Minute, 12 * time.Second},     // a fifth
		{10 * time.Minute, 2 * time.Minute}, // a fifth
		{2 * time.Hour, 5 * time.Minute},    // at most 5 min
	} {
		src, _ := tokSource(t, ep, tokToken(tc.lifetime, tokOldRefresh))
		src.obtained = time.Now() // a token just issued with this lifetime
		at, _, ok := src.nextRefresh()
		if !ok {
			t.Fatalf("lifetime %s: nothing to refresh", tc.lifetime)
		}
		if d := src.tok.Expiry.Sub(at) - tc.lead; d < -time.Second || d > time.Second {
			t.Errorf("lifetime %s: refresh %s before expiry, want %s", tc.lifetime, src.tok.Expiry.Sub(at), tc.lead)
		}
	}
	for name, tok := range map[string]*oauth2.Token{
		"no expiry":        tokToken(0, tokOldRefresh),
		"no refresh token": tokToken(time.Hour, ""),
	} {
		src, _ := tokSource(t, ep, tok)
		if _, _, ok := src.nextRefresh(); ok {
			t.Errorf("%s: nextRefresh wants a refresh", name)
		}
	}
}

// tokGo runs the refresher's goroutine in a WaitGroup the test waits for.
func tokGo(t *testing.T) func(func()) {
	t.Helper()
	var wg sync.WaitGroup
	t.Cleanup(func() {
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(tokWait):
			t.Error("the refresher goroutine did not end")
		}
	})
	return wg.Go
}

// The background refresher refreshes a short-lived token before it
// expires, without anybody calling Token().
func TestRefresherRefreshesBeforeExpiry(t *testing.T) {
	ep := tokNewEndpoint(t)
	old := tokToken(3*time.Second, tokOldRefresh) // due at half its lifetime
	src, rec := tokSource(t, ep, old)
	r := newRefresher(tokGo(t), slog.New(slog.DiscardHandler))
	defer r.stop()
	r.watch(src)

	var saved *oauth2.Token
	select {
	case saved = <-rec.savedCh:
	case <-time.After(tokWait):
		t.Fatal("the refresher did not refresh")
	}
	if saved.AccessToken != "new-access-1" {
		t.Fatalf("saved %q, want new-access-1", saved.AccessToken)
	}
	if n := ep.refreshes.Load(); n != 1 {
		t.Fatalf("%d refreshes, want 1", n)
	}
	ep.mu.Lock()
	hitAt := ep.hitAt
	ep.mu.Unlock()
	if !hitAt.Before(old.Expiry) {
		t.Errorf("refreshed at %s, after the old token expired at %s", hitAt, old.Expiry)
	}
	// The source hands out the new token without a request of its own.
	got, err := src.Token()
	if err != nil || got != saved {
		t.Fatalf("Token() = %v, %v; want the saved token", got, err)
	}
	if n := ep.refreshes.Load(); n != 1 {
		t.Fatalf("%d refreshes after Token(), want 1", n)
	}
}

// watch switches the refresher to a new source (a new login).
func TestRefresherFollowsWatchedSource(t *testing.T) {
	ep := tokNewEndpoint(t)
	first, rec1 := tokSource(t, ep, tokToken(time.Hour, tokOldRefresh))
	r := newRefresher(tokGo(t), slog.New(slog.DiscardHandler))
	defer r.stop()
	r.watch(first)
	second, rec2 := tokSource(t, ep, tokToken(3*time.Second, tokOldRefresh))
	first.retire()
	r.watch(second)
	select {
	case tok := <-rec2.savedCh:
		if tok.AccessToken != "new-access-1" {
			t.Fatalf("saved %q", tok.AccessToken)
		}
	case <-time.After(tokWait):
		t.Fatal("the refresher did not refresh the new source")
	}
	if rec1.savedN() != 0 {
		t.Fatal("the old source was refreshed")
	}
}

// A refresh refused in the background ends the login once; the source
// then answers ErrNeedsReauth without more requests.
func TestRefresherRefused(t *testing.T) {
	ep := tokNewEndpoint(t)
	ep.setMode(tokRefuse)
	src, rec := tokSource(t, ep, tokToken(3*time.Second, tokOldRefresh))
	r := newRefresher(tokGo(t), slog.New(slog.DiscardHandler))
	r.watch(src)
	select {
	case err := <-rec.refCh:
		if !errors.Is(err, ErrNeedsReauth) {
			t.Fatalf("refused with %v, want ErrNeedsReauth", err)
		}
	case <-time.After(tokWait):
		t.Fatal("the refusal was not reported")
	}
	if _, err := src.Token(); !errors.Is(err, ErrNeedsReauth) {
		t.Fatalf("Token() = %v, want ErrNeedsReauth", err)
	}
	r.stop()
	if n := ep.refreshes.Load(); n != 1 {
		t.Fatalf("%d refreshes, want 1", n)
	}
	if rec.refusedN() != 1 {
		t.Fatalf("refused %d times, want 1", rec.refusedN())
	}
}

// stop ends the refresher also while it backs off after a failure.
func TestRefresherStopDuringBackoff(t *testing.T) {
	ep := tokNewEndpoint(t)
	ep.setMode(tok500)
	src, rec := tokSource(t, ep, tokToken(3*time.Second, tokOldRefresh))
	r := newRefresher(tokGo(t), slog.New(slog.DiscardHandler))
	r.watch(src)
	testutil.Eventually(t, tokWait, "the refresher to try", func() bool { return ep.refreshes.Load() > 0 })
	r.stop()
	r.stop()     // twice is fine
	r.watch(src) // after stop: no new goroutine, no panic
	if rec.refusedN() != 0 {
		t.Fatal("a transient failure ended the login")
	}
	// tokGo's cleanup fails the test if the loop does not end.
}

// ---------------------------------------------------------------------------
// AuthCode persistence

const tokServerURL = "https://mcp.example.com/mcp"

func tokStore(t *testing.T) tokenstore.Store {
	t.Helper()
	dir := t.TempDir()
	return tokenstore.Store{Dir: func() (string, error) { return dir, nil }}
}

func tokRecord(ep *tokEndpoint, expiresIn time.Duration) *tokenstore.Record {
	return &tokenstore.Record{
		ServerURL: tokServerURL,
		AuthKey:   recordKey(AuthCodeConfig{}), // tokAuthCode configures no client
		Token: &tokenstore.Token{
			AccessToken: tokOldAccess, TokenType: "Bearer", RefreshToken: tokOldRefresh,
			ExpiresAt: time.Now().Add(expiresIn).UTC(),
		},
		Client: &tokenstore.Client{
			ClientID: "client-1", ClientSecret: "client-secret-1",
			RedirectURI: "http://127.0.0.1:45678/callback",
			AuthStyle:   int(oauth2.AuthStyleInParams), Registered: true,
		},
		AuthServer: &tokenstore.AuthServer{
			Issuer:                "https://as.example.com",
			AuthorizationEndpoint: "https://as.example.com/authorize",
			TokenEndpoint:         ep.url,
			Metadata:              json.RawMessage(`{"issuer":"https://as.example.com"}`),
		},
	}
}

func tokAuthCode(t *testing.T, st tokenstore.Store, onRefused func(error)) *AuthCode {
	t.Helper()
	return tokAuthCodeWith(t, st, func(cfg *AuthCodeConfig) { cfg.OnRefused = onRefused })
}

// tokAuthCodeWith is tokAuthCode with more of the config set by set.
func tokAuthCodeWith(t *testing.T, st tokenstore.Store, set func(*AuthCodeConfig)) *AuthCode {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	cfg := AuthCodeConfig{
		Server: "ex", URL: tokServerURL, Store: st,
		Login: func(context.Context, LoginRequest) (*auth.AuthorizationResult, error) {
			t.Error("Login called: a stored login must not open the browser")
			return nil, errors.New("no login in this test")
		},
		HTTPClient: &http.Client{Transport: tr},
		Go:         tokGo(t),
	}
	set(&cfg)
	h, err := NewAuthCode(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	return h
}

func tokLoad(t *testing.T, st tokenstore.Store) *tokenstore.Record {
	t.Helper()
	rec, err := st.Load("ex")
	if err != nil || rec == nil {
		t.Fatalf("Load = %v, %v", rec, err)
	}
	return rec
}

func tokCurrent(t *testing.T, h *AuthCode) *tokenSource {
	t.Helper()
	ts, err := h.TokenSource(context.Background())
	if err != nil || ts == nil {
		t.Fatalf("TokenSource = %v, %v; want the stored login", ts, err)
	}
	return ts.(*tokenSource)
}

// A stored login is used without a request, a refresh is stored with the
// client and authorization server kept, and the redirect port is reused.
func TestAuthCodePersistsRefresh(t *testing.T) {
	ep := tokNewEndpoint(t)
	st := tokStore(t)
	if err := st.Save("ex", tokRecord(ep, time.Hour)); err != nil {
		t.Fatal(err)
	}
	h := tokAuthCode(t, st, nil)
	if h.redirect != "http://127.0.0.1:45678/callback" {
		t.Errorf("redirect = %q, want the stored one", h.redirect)
	}
	src := tokCurrent(t, h)
	tok, err := src.Token()
	if err != nil || tok.AccessToken != tokOldAccess {
		t.Fatalf("Token() = %v, %v; want the stored token", tok, err)
	}
	if ep.refreshes.Load() != 0 {
		t.Fatal("a valid stored token was refreshed")
	}

	if err := src.refreshNow(); err != nil {
		t.Fatal(err)
	}
	rec := tokLoad(t, st)
	if rec.Token == nil || rec.Token.AccessToken != "new-access-1" || rec.Token.RefreshToken != "new-refresh-1" {
		t.Fatalf("stored token = %+v, want the refreshed one", rec.Token)
	}
	if rec.ServerURL != tokServerURL || rec.Client == nil || rec.Client.ClientID != "client-1" ||
		rec.Client.ClientSecret != "client-secret-1" || !rec.Client.Registered ||
		rec.Client.RedirectURI != "http://127.0.0.1:45678/callback" || rec.Client.AuthStyle != int(oauth2.AuthStyleInParams) {
		t.Fatalf("stored client = %+v, want the stored one kept", rec.Client)
	}
	var md map[string]any
	if rec.AuthServer != nil {
		_ = json.Unmarshal(rec.AuthServer.Metadata, &md)
	}
	if rec.AuthServer == nil || rec.AuthServer.Issuer != "https://as.example.com" || rec.AuthServer.TokenEndpoint != ep.url ||
		md["issuer"] != "https://as.example.com" {
		t.Fatalf("stored authorization server = %+v, want the stored one kept", rec.AuthServer)
	}
}

// The background refresher of an AuthCode stores a refreshed token.
func TestAuthCodeBackgroundRefreshStored(t *testing.T) {
	ep := tokNewEndpoint(t)
	st := tokStore(t)
	if err := st.Save("ex", tokRecord(ep, 3*time.Second)); err != nil {
		t.Fatal(err)
	}
	bus := events.NewBus(nil)
	defer bus.Close()
	sub := bus.Subscribe(events.SubscribeOptions{})
	tokAuthCodeWith(t, st, func(cfg *AuthCodeConfig) { cfg.Emit = bus.Emit })
	// Announced once it is stored.
	testutil.Await[events.TokenRefreshed](t, sub, tokWait, "the background refresh", nil)
	if rec := tokLoad(t, st); rec.Token == nil || rec.Token.AccessToken != "new-access-1" {
		t.Fatal("the background refresh was announced but not stored")
	}
	if n := ep.refreshes.Load(); n != 1 {
		t.Fatalf("%d refreshes, want 1", n)
	}
}

// A refused refresh forgets the stored token, keeps the client, and tells
// the owner once.
func TestAuthCodeRefusedForgetsToken(t *testing.T) {
	ep := tokNewEndpoint(t)
	ep.setMode(tokRefuse)
	st := tokStore(t)
	if err := st.Save("ex", tokRecord(ep, time.Hour)); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var refused []error
	h := tokAuthCode(t, st, func(err error) { mu.Lock(); refused = append(refused, err); mu.Unlock() })
	src := tokCurrent(t, h)
	err := src.refreshNow()
	if !errors.Is(err, ErrNeedsReauth) {
		t.Fatalf("refreshNow() = %v, want ErrNeedsReauth", err)
	}
	mu.Lock()
	if len(refused) != 1 || !errors.Is(refused[0], ErrNeedsReauth) {
		t.Errorf("OnRefused calls %v, want one with ErrNeedsReauth", refused)
	}
	mu.Unlock()
	rec := tokLoad(t, st)
	if rec.Token != nil {
		t.Fatalf("stored token = %+v after a refusal, want none", rec.Token)
	}
	if rec.Client == nil || rec.Client.ClientID != "client-1" || rec.AuthServer == nil || rec.AuthServer.TokenEndpoint != ep.url {
		t.Fatalf("stored record = %+v, want the client and authorization server kept", rec)
	}
	// The next connection starts without a usable token: a login.
	h2 := tokAuthCode(t, st, nil)
	if ts, _ := h2.TokenSource(context.Background()); ts != nil {
		t.Fatal("a refused login was resumed")
	}
}

// After Close nothing is stored, and a login for another URL is ignored.
func TestAuthCodeCloseAndOtherURL(t *testing.T) {
	ep := tokNewEndpoint(t)
	st := tokStore(t)
	if err := st.Save("ex", tokRecord(ep, time.Hour)); err != nil {
		t.Fatal(err)
	}
	h := tokAuthCode(t, st, nil)
	src := tokCurrent(t, h)
	h.Close()
	if err := src.refreshNow(); err == nil {
		t.Fatal("a refresh after Close succeeded")
	}
	if rec := tokLoad(t, st); rec.Token == nil || rec.Token.AccessToken != tokOldAccess {
		t.Fatalf("stored token = %+v after Close, want the old one", rec.Token)
	}

	other := tokRecord(ep, time.Hour)
	other.ServerURL = "https://elsewhere.example.com/mcp"
	if err := st.Save("ex", other); err != nil {
		t.Fatal(err)
	}
	h2 := tokAuthCode(t, st, nil)
	if ts, _ := h2.TokenSource(context.Background()); ts != nil {
		t.Fatal("a login stored for another URL was used")
	}
}

// A token endpoint that redirects does not get the refresh token resent
// elsewhere: the refresh fails instead (as the client credentials grant).
func TestAuthCodeRefreshDoesNotFollowRedirects(t *testing.T) {
	var leaked atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ParseForm() == nil && r.PostForm.Get("refresh_token") != "" {
			leaked.Add(1)
		}
		http.Error(w, "nope", http.StatusBadRequest)
	}))
	defer other.Close()
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/token", http.StatusTemporaryRedirect)
	}))
	defer redirector.Close()

	st := tokStore(t)
	rec := tokRecord(&tokEndpoint{url: redirector.URL + "/token"}, time.Hour)
	if err := st.Save("ex", rec); err != nil {
		t.Fatal(err)
	}
	h := tokAuthCode(t, st, nil)
	err := tokCurrent(t, h).refreshNow()
	if err == nil {
		t.Fatal("a redirected refresh succeeded")
	}
	if !strings.Contains(err.Error(), "307") || errors.Is(err, ErrNeedsReauth) {
		t.Errorf("err = %v, want a transient error naming the 307", err)
	}
	tokAssertClean(t, err)
	if n := leaked.Load(); n != 0 {
		t.Fatalf("the refresh token was resent to the redirect target %d times", n)
	}
}
