package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/internal/exampleserver"
)

// Marker secrets an OAuth test plants: the authorization server issues
// tokens and a client secret that contain them, so a grep finds any leak.
const (
	oauthAccessMarker  = "at-OAUTHMARK-5d1c"
	oauthRefreshMarker = "rt-OAUTHMARK-77e2"
	oauthSecretMarker  = "cs-OAUTHMARK-a90f"
	oauthCodeMarker    = "code-OAUTHMARK-3b3b"
)

// authServer is an in-process OAuth 2.1 authorization server and the MCP
// server it protects, on one loopback httptest server: protected resource
// metadata, authorization server metadata, dynamic client registration,
// an authorize endpoint that redirects at once (the user always
// consents), a token endpoint for codes and refresh tokens, and the MCP
// endpoint at /mcp behind a bearer check.
type authServer struct {
	t   *testing.T
	srv *httptest.Server

	mu            sync.Mutex
	lifetime      time.Duration        // of issued access tokens
	refuseRefresh bool                 // answer invalid_grant to refreshes
	metadataDown  bool                 // metadata endpoints answer 500
	echoExchange  bool                 // code exchanges fail, echoing the form
	refuseCode    bool                 // code exchanges get invalid_grant
	access        map[string]time.Time // valid access tokens and their expiry
	refresh       map[string]bool
	codes         map[string]string // code -> redirect_uri
	seq           int
	authorizes    int // authorize requests: one per browser login
	registrations int
	codeGrants    int
	refreshGrants int
	metadataGets  int
	lastToken     string // the token of the last accepted MCP request
	// endpoints replace fields of the authorization server metadata, as a
	// hostile server would (its token_endpoint, say).
	endpoints map[string]string
	// leakTool gives the MCP server the example server's leak tool, and
	// every accepted MCP request an X-Seen-Tokens header listing each
	// access token the server has accepted so far: a careless server
	// echoing the current token and the previous ones.
	leakTool   bool
	seenTokens []string
}

func newAuthServer(t *testing.T) *authServer {
	a := &authServer{t: t, lifetime: time.Hour, access: map[string]time.Time{}, refresh: map[string]bool{}, codes: map[string]string{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", a.protectedResource)
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", a.metadata)
	mux.HandleFunc("POST /register", a.register)
	mux.HandleFunc("GET /authorize", a.authorize)
	mux.HandleFunc("POST /token", a.token)
	getServer := func(*http.Request) *mcp.Server {
		a.mu.Lock()
		leak := a.leakTool
		a.mu.Unlock()
		return exampleserver.NewServer(exampleserver.Options{LeakTool: leak, Stderr: io.Discard})
	}
	mux.Handle("/mcp", a.guard(mcp.NewStreamableHTTPHandler(getServer, nil)))
	a.srv = httptest.NewServer(mux)
	t.Cleanup(a.srv.Close) // registered before the runtime: runs after its shutdown
	return a
}

// server is the config of an oauth server at this authorization server.
func (a *authServer) server(name string) config.Server {
	return config.Server{Name: name, Type: config.TypeHTTP, URL: a.srv.URL + "/mcp", Enabled: true,
		Auth: &config.Auth{Kind: config.AuthOAuth}}
}

func (a *authServer) with(f func(a *authServer)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	f(a)
}

func (a *authServer) counts() (authorizes, registrations, codeGrants, refreshGrants int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.authorizes, a.registrations, a.codeGrants, a.refreshGrants
}

// revokeAccess makes every issued access token invalid, as a server does
// when it rotates keys: the client must refresh or log in again.
func (a *authServer) revokeAccess() {
	a.with(func(a *authServer) { clear(a.access) })
}

func asJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

func (a *authServer) protectedResource(w http.ResponseWriter, r *http.Request) {
	asJSON(w, 200, map[string]any{"resource": a.srv.URL + "/mcp", "authorization_servers": []string{a.srv.URL}})
}

func (a *authServer) metadata(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	a.metadataGets++
	down, endpoints := a.metadataDown, a.endpoints
	a.mu.Unlock()
	if down {
		http.Error(w, "down", http.StatusInternalServerError)
		return
	}
	u := a.srv.URL
	meta := map[string]any{
		"issuer": u, "authorization_endpoint": u + "/authorize", "token_endpoint": u + "/token",
		"registration_endpoint": u + "/register", "response_types_supported": []string{"code"},
		"grant_types_supported":                 []string{"authorization_code", "refresh_token"},
		"code_challenge_methods_supported":      []string{"S256"},
		"scopes_supported":                      []string{"mcp", "offline_access"},
		"token_endpoint_auth_methods_supported": []string{"client_secret_post"},
	}
	for k, v := range endpoints {
		meta[k] = v
	}
	asJSON(w, 200, meta)
}

func (a *authServer) register(w http.ResponseWriter, r *http.Request) {
	var req struct {
		RedirectURIs []string `json:"redirect_uris"`
	}
	json.NewDecoder(r.Body).Decode(&req)
	a.mu.Lock()
	a.registrations++
	a.mu.Unlock()
	asJSON(w, 201, map[string]any{"client_id": "client-1", "client_secret": oauthSecretMarker,
		"redirect_uris": req.RedirectURIs, "token_endpoint_auth_method": "client_secret_post"})
}

func (a *authServer) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("client_id") != "client-1" || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" {
		http.Error(w, "bad authorization request", http.StatusBadRequest)
		return
	}
	a.mu.Lock()
	a.authorizes++
	a.seq++
	code := fmt.Sprintf("%s-%d", oauthCodeMarker, a.seq)
	a.codes[code] = q.Get("redirect_uri")
	a.mu.Unlock()
	to, _ := url.Parse(q.Get("redirect_uri"))
	v := url.Values{"code": {code}, "state": {q.Get("state")}}
	to.RawQuery = v.Encode()
	http.Redirect(w, r, to.String(), http.StatusFound)
}

func (a *authServer) token(w http.ResponseWriter, r *http.Request) {
	r.ParseForm()
	if r.PostForm.Get("client_id") != "client-1" || r.PostForm.Get("client_secret") != oauthSecretMarker {
		asJSON(w, 401, map[string]any{"error": "invalid_client"})
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	switch r.PostForm.Get("grant_type") {
	case "authorization_code":
		if a.echoExchange {
			// A careless server quoting what it got: code, verifier and
			// client secret must not travel on into any error.
			http.Error(w, "cannot exchange "+r.PostForm.Encode(), http.StatusInternalServerError)
			return
		}
		code := r.PostForm.Get("code")
		if redirect, ok := a.codes[code]; a.refuseCode || !ok || redirect != r.PostForm.Get("redirect_uri") || r.PostForm.Get("code_verifier") == "" {
			asJSON(w, 400, map[string]any{"error": "invalid_grant"})
			return
		}
		delete(a.codes, code)
		a.codeGrants++
	case "refresh_token":
		a.refreshGrants++
		rt := r.PostForm.Get("refresh_token")
		if a.refuseRefresh || !a.refresh[rt] {
			// The body echoes what was sent, as careless servers do: it
			// must not reach any error or log.
			asJSON(w, 400, map[string]any{"error": "invalid_grant", "error_description": "unknown " + rt})
			return
		}
		delete(a.refresh, rt)
	case "client_credentials": // no refresh token (RFC 6749 §4.4.3)
		a.seq++
		at := fmt.Sprintf("%s-%d", oauthAccessMarker, a.seq)
		a.access[at] = time.Now().Add(a.lifetime)
		asJSON(w, 200, map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": int(a.lifetime / time.Second)})
		return
	default:
		asJSON(w, 400, map[string]any{"error": "unsupported_grant_type"})
		return
	}
	a.seq++
	at, rt := fmt.Sprintf("%s-%d", oauthAccessMarker, a.seq), fmt.Sprintf("%s-%d", oauthRefreshMarker, a.seq)
	a.access[at] = time.Now().Add(a.lifetime)
	a.refresh[rt] = true
	asJSON(w, 200, map[string]any{"access_token": at, "token_type": "Bearer", "refresh_token": rt,
		"expires_in": int(a.lifetime / time.Second), "scope": "mcp offline_access"})
}

func (a *authServer) guard(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		a.mu.Lock()
		exp, ok := a.access[tok]
		ok = ok && time.Now().Before(exp)
		if ok {
			a.lastToken = tok
			if a.leakTool && !slices.Contains(a.seenTokens, tok) {
				a.seenTokens = append(a.seenTokens, tok)
			}
			r.Header.Set("X-Seen-Tokens", strings.Join(a.seenTokens, " "))
		}
		a.mu.Unlock()
		// A session's DELETE passes without a token, so that a client whose
		// token was revoked still ends its server-side session (the handler
		// has no other way to close it, and goleak would see it).
		if !ok && r.Method != http.MethodDelete {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer resource_metadata="%s/.well-known/oauth-protected-resource/mcp"`, a.srv.URL))
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// browser stands in for the user's browser: it follows the authorization
// URL to the authorization server's redirect and delivers that to the
// callback listener, as a browser would. opened counts logins.
type browser struct {
	mu     sync.Mutex
	opened []string
	// before, if set, runs with the callback URL before the real redirect
	// is delivered (to send a forged one first, say).
	before func(callback *url.URL)
	// stay, if set, makes the browser never come back: the user walked away.
	stay bool
	// changed is closed (and replaced) at each open, for awaitOpens.
	changed chan struct{}
}

func (b *browser) open(ctx context.Context, authURL string) error {
	b.mu.Lock()
	b.opened = append(b.opened, authURL)
	if b.changed != nil {
		close(b.changed)
		b.changed = nil
	}
	stay, before := b.stay, b.before
	b.mu.Unlock()
	if stay {
		return nil
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || resp.StatusCode != http.StatusFound {
		return errors.New("no redirect from the authorization server")
	}
	if before != nil {
		before(loc)
	}
	resp, err = client.Get(loc.String())
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return nil
}

// awaitOpens waits until the browser was opened n times in all.
func (b *browser) awaitOpens(t *testing.T, n int) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		b.mu.Lock()
		if len(b.opened) >= n {
			b.mu.Unlock()
			return
		}
		if b.changed == nil {
			b.changed = make(chan struct{})
		}
		changed := b.changed
		b.mu.Unlock()
		select {
		case <-changed:
		case <-timeout:
			t.Fatalf("the browser opened %d times in 10s, want %d", b.opens(), n)
		}
	}
}

func (b *browser) opens() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.opened)
}

func (b *browser) last() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.opened) == 0 {
		return ""
	}
	return b.opened[len(b.opened)-1]
}
