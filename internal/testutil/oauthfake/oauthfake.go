// Package oauthfake is an in-process OAuth 2.1 authorization server and
// the MCP server it protects, for tests: the runtime's login tests and the
// console's browser test drive the same fake, so what it does (and which
// marker secrets it issues) is said once.
package oauthfake

import (
	"encoding/json"
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

// Marker secrets the server plants: the tokens, codes and client secret
// it issues contain them, so a grep finds any leak.
const (
	AccessMarker  = "at-OAUTHMARK-5d1c"
	RefreshMarker = "rt-OAUTHMARK-77e2"
	SecretMarker  = "cs-OAUTHMARK-a90f" // the registered client's secret, whole
	CodeMarker    = "code-OAUTHMARK-3b3b"
)

// ClientID is the client_id that registration hands out and the token
// endpoint accepts (with SecretMarker as its secret).
const ClientID = "client-1"

// State is what a test sets to make the server misbehave, and the counts
// it reads; [Server.With] gives it under the server's lock.
type State struct {
	Lifetime      time.Duration // of issued access tokens; default an hour
	RefuseRefresh bool          // answer invalid_grant to refreshes
	MetadataDown  bool          // metadata endpoints answer 500
	EchoExchange  bool          // code exchanges fail, echoing the form
	RefuseCode    bool          // code exchanges get invalid_grant
	// Endpoints replace fields of the authorization server metadata, as a
	// hostile server would (its token_endpoint, say).
	Endpoints map[string]string
	// LeakTool gives the MCP server the example server's leak tool, and
	// every accepted MCP request an X-Seen-Tokens header listing each
	// access token the server has accepted so far: a careless server
	// echoing the current token and the previous ones.
	LeakTool bool

	Authorizes    int // authorize requests: one per browser login
	Registrations int
	CodeGrants    int
	RefreshGrants int
	MetadataGets  int
	LastToken     string   // the token of the last accepted MCP request
	SeenTokens    []string // with LeakTool: every access token accepted
}

// Server is the authorization server and the MCP server, on one loopback
// httptest server: protected resource metadata, authorization server
// metadata, dynamic client registration, an authorize endpoint that
// redirects at once (the user always consents), a token endpoint for
// codes, refresh tokens and client credentials, and the MCP endpoint at
// /mcp behind a bearer check.
type Server struct {
	// URL is the server's base URL (http://127.0.0.1:port).
	URL string

	mu      sync.Mutex
	st      State
	access  map[string]time.Time // valid access tokens and their expiry
	refresh map[string]bool
	codes   map[string]string // code -> redirect_uri
	seq     int
}

// New starts a Server on 127.0.0.1; it is closed when the test ends. Call
// it before starting the runtime that uses it: cleanups run last first,
// so the server outlives the runtime's shutdown.
func New(t testing.TB) *Server {
	s := &Server{st: State{Lifetime: time.Hour}, access: map[string]time.Time{}, refresh: map[string]bool{}, codes: map[string]string{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", s.protectedResource)
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", s.metadata)
	mux.HandleFunc("POST /register", s.register)
	mux.HandleFunc("GET /authorize", s.authorize)
	mux.HandleFunc("POST /token", s.token)
	getServer := func(*http.Request) *mcp.Server {
		s.mu.Lock()
		leak := s.st.LeakTool
		s.mu.Unlock()
		return exampleserver.NewServer(exampleserver.Options{LeakTool: leak, Stderr: io.Discard})
	}
	mux.Handle("/mcp", s.guard(mcp.NewStreamableHTTPHandler(getServer, nil)))
	srv := httptest.NewServer(mux) // 127.0.0.1
	s.URL = srv.URL
	t.Cleanup(srv.Close)
	return s
}

// Config is the config of an oauth server named name at this server.
func (s *Server) Config(name string) config.Server {
	return config.Server{Name: name, Type: config.TypeHTTP, URL: s.URL + "/mcp", Enabled: true,
		Auth: &config.Auth{Kind: config.AuthOAuth}}
}

// With runs f on the server's state under its lock.
func (s *Server) With(f func(st *State)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&s.st)
}

// Counts is the authorize requests, registrations, code grants and
// refresh grants so far.
func (s *Server) Counts() (authorizes, registrations, codeGrants, refreshGrants int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.Authorizes, s.st.Registrations, s.st.CodeGrants, s.st.RefreshGrants
}

// RevokeAccess makes every issued access token invalid, as a server does
// when it rotates keys: the client must refresh or log in again.
func (s *Server) RevokeAccess() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.access)
}

// TokenHandler is the token endpoint alone, to serve elsewhere (a token
// endpoint on another host).
func (s *Server) TokenHandler() http.Handler { return http.HandlerFunc(s.token) }

func asJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

func (s *Server) protectedResource(w http.ResponseWriter, r *http.Request) {
	asJSON(w, 200, map[string]any{"resource": s.URL + "/mcp", "authorization_servers": []string{s.URL}})
}

func (s *Server) metadata(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.st.MetadataGets++
	down, endpoints := s.st.MetadataDown, s.st.Endpoints
	s.mu.Unlock()
	if down {
		http.Error(w, "down", http.StatusInternalServerError)
		return
	}
	u := s.URL
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

func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	var req struct {
		RedirectURIs []string `json:"redirect_uris"`
	}
	json.NewDecoder(r.Body).Decode(&req)
	s.mu.Lock()
	s.st.Registrations++
	s.mu.Unlock()
	asJSON(w, 201, map[string]any{"client_id": ClientID, "client_secret": SecretMarker,
		"redirect_uris": req.RedirectURIs, "token_endpoint_auth_method": "client_secret_post"})
}

func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("client_id") != ClientID || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" {
		http.Error(w, "bad authorization request", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.st.Authorizes++
	s.seq++
	code := fmt.Sprintf("%s-%d", CodeMarker, s.seq)
	s.codes[code] = q.Get("redirect_uri")
	s.mu.Unlock()
	to, _ := url.Parse(q.Get("redirect_uri"))
	v := url.Values{"code": {code}, "state": {q.Get("state")}}
	to.RawQuery = v.Encode()
	http.Redirect(w, r, to.String(), http.StatusFound)
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	r.ParseForm()
	if r.PostForm.Get("client_id") != ClientID || r.PostForm.Get("client_secret") != SecretMarker {
		asJSON(w, 401, map[string]any{"error": "invalid_client"})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch r.PostForm.Get("grant_type") {
	case "authorization_code":
		if s.st.EchoExchange {
			// A careless server quoting what it got: code, verifier and
			// client secret must not travel on into any error.
			http.Error(w, "cannot exchange "+r.PostForm.Encode(), http.StatusInternalServerError)
			return
		}
		code := r.PostForm.Get("code")
		if redirect, ok := s.codes[code]; s.st.RefuseCode || !ok || redirect != r.PostForm.Get("redirect_uri") || r.PostForm.Get("code_verifier") == "" {
			asJSON(w, 400, map[string]any{"error": "invalid_grant"})
			return
		}
		delete(s.codes, code)
		s.st.CodeGrants++
	case "refresh_token":
		s.st.RefreshGrants++
		rt := r.PostForm.Get("refresh_token")
		if s.st.RefuseRefresh || !s.refresh[rt] {
			// The body echoes what was sent, as careless servers do: it
			// must not reach any error or log.
			asJSON(w, 400, map[string]any{"error": "invalid_grant", "error_description": "unknown " + rt})
			return
		}
		delete(s.refresh, rt)
	case "client_credentials": // no refresh token (RFC 6749 §4.4.3)
		s.seq++
		at := fmt.Sprintf("%s-%d", AccessMarker, s.seq)
		s.access[at] = time.Now().Add(s.st.Lifetime)
		asJSON(w, 200, map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": int(s.st.Lifetime / time.Second)})
		return
	default:
		asJSON(w, 400, map[string]any{"error": "unsupported_grant_type"})
		return
	}
	s.seq++
	at, rt := fmt.Sprintf("%s-%d", AccessMarker, s.seq), fmt.Sprintf("%s-%d", RefreshMarker, s.seq)
	s.access[at] = time.Now().Add(s.st.Lifetime)
	s.refresh[rt] = true
	asJSON(w, 200, map[string]any{"access_token": at, "token_type": "Bearer", "refresh_token": rt,
		"expires_in": int(s.st.Lifetime / time.Second), "scope": "mcp offline_access"})
}

func (s *Server) guard(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		s.mu.Lock()
		exp, ok := s.access[tok]
		ok = ok && time.Now().Before(exp)
		if ok {
			s.st.LastToken = tok
			if s.st.LeakTool && !slices.Contains(s.st.SeenTokens, tok) {
				s.st.SeenTokens = append(s.st.SeenTokens, tok)
			}
			r.Header.Set("X-Seen-Tokens", strings.Join(s.st.SeenTokens, " "))
		}
		s.mu.Unlock()
		// A session's DELETE passes without a token, so that a client whose
		// token was revoked still ends its server-side session (the handler
		// has no other way to close it, and goleak would see it).
		if !ok && r.Method != http.MethodDelete {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer resource_metadata="%s/.well-known/oauth-protected-resource/mcp"`, s.URL))
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}
