package oauthflow

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
	"golang.org/x/oauth2"

	"github.com/openprogram/mcpvisor/config"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// Planted markers: none of them may ever show up in an error string.
const (
	ccClientID          = "mcpvisor-test-client"
	ccSecretMarker      = "MARKER-S3CR3T-c1f4+/=&x" // needs escaping in a form and in basic auth
	ccWrongSecretMarker = "MARKER-WR0NG-S3CR3T-77a1"
	ccAccessTokenPrefix = "MARKER-ACCESS-TOKEN-"
)

// ---------------------------------------------------------------------------
// Keys

type ccKey struct {
	signer crypto.Signer
	pem    string
	alg    string
}

var (
	ccKeysOnce sync.Once
	ccKeys     map[string]*ccKey // by name
)

func ccPKCS8PEM(t testing.TB, k any) string {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
}

// ccGetKey returns a lazily generated key; the signer is obtained through
// config.Auth.Signer, as the caller of this package does.
func ccGetKey(t testing.TB, name string) *ccKey {
	t.Helper()
	ccKeysOnce.Do(func() {
		ccKeys = map[string]*ccKey{}
		gen := func(name, alg string, k any) {
			p := ccPKCS8PEM(t, k)
			s := config.Auth{PrivateKey: p}.Signer()
			if s == nil {
				t.Fatalf("config.Auth.Signer(%s) = nil", name)
			}
			ccKeys[name] = &ccKey{signer: s, pem: p, alg: alg}
		}
		ec256, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		ec256b, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		ec384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
		rsa1, _ := rsa.GenerateKey(rand.Reader, 2048)
		gen("ec256", "ES256", ec256)
		gen("ec256-other", "ES256", ec256b)
		gen("ec384", "ES384", ec384)
		gen("rsa", "RS256", rsa1)
		gen("rsa-pss", "PS256", rsa1)
	})
	k := ccKeys[name]
	if k == nil {
		t.Fatalf("no key %q", name)
	}
	return k
}

// ccPEMLines returns the base64 lines of a PEM text (the key material).
func ccPEMLines(p string) []string {
	var out []string
	for _, l := range strings.Split(p, "\n") {
		if len(l) >= 16 && !strings.HasPrefix(l, "-----") {
			out = append(out, l)
		}
	}
	return out
}

// ---------------------------------------------------------------------------
// In-process authorization server

type ccAuthServer struct {
	// Configuration, fixed before the server starts.
	method        string
	pub           crypto.PublicKey
	alg           string
	secret        string
	expiresIn     int
	issuer        string // as listed in the PRM
	metaIssuer    string // as published in the metadata
	tokenEndpoint string // as published in the metadata
	noMetadata    bool
	redirectToken bool
	plainErrors   bool // reject with a non-JSON body (shown by oauth2.RetrieveError.Error)

	mu        sync.Mutex
	issued    map[string]bool
	jtis      []string
	seenJTI   map[string]bool
	received  []string // secrets and assertions received, rejected or not
	scopes    []string // scope parameter of each successful request
	requests  int
	failures  []string
	token2Hit bool
}

func (a *ccAuthServer) register(mux *http.ServeMux) {
	if !a.noMetadata {
		mux.HandleFunc("/.well-known/oauth-authorization-server", a.handleMetadata)
	}
	mux.HandleFunc("/token", a.handleToken)
	mux.HandleFunc("/token2", func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		a.token2Hit = true
		a.mu.Unlock()
		a.handleToken(w, r)
	})
}

func ccWriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (a *ccAuthServer) handleMetadata(w http.ResponseWriter, r *http.Request) {
	ccWriteJSON(w, http.StatusOK, map[string]any{
		"issuer":                                a.metaIssuer,
		"token_endpoint":                        a.tokenEndpoint,
		"code_challenge_methods_supported":      []string{"S256"},
		"grant_types_supported":                 []string{"client_credentials"},
		"token_endpoint_auth_methods_supported": []string{a.method},
		"response_types_supported":              []string{"code"},
	})
}

func (a *ccAuthServer) handleToken(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if err := r.ParseForm(); err != nil {
		ccWriteJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request"})
		return
	}
	a.mu.Lock()
	a.requests++
	a.mu.Unlock()
	if a.redirectToken && r.URL.Path == "/token" {
		http.Redirect(w, r, "/token2", http.StatusTemporaryRedirect)
		return
	}
	// fail rejects the request; the body deliberately echoes what was
	// received, to check that response bodies never reach error strings.
	fail := func(reason, echo string) {
		a.mu.Lock()
		a.failures = append(a.failures, reason)
		a.mu.Unlock()
		if a.plainErrors {
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprintf(w, "debug_echo: cannot verify %q", echo)
			return
		}
		ccWriteJSON(w, http.StatusUnauthorized, map[string]string{
			"error":             "invalid_client",
			"error_description": "client authentication failed",
			"debug_echo":        echo,
		})
	}
	record := func(s string) {
		a.mu.Lock()
		a.received = append(a.received, s)
		a.mu.Unlock()
	}
	if gt := r.PostForm.Get("grant_type"); gt != "client_credentials" {
		ccWriteJSON(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type"})
		return
	}
	switch a.method {
	case MethodClientSecretBasic:
		id, sec, ok := r.BasicAuth()
		if !ok {
			fail("no basic auth", "")
			return
		}
		id, _ = url.QueryUnescape(id)
		sec, _ = url.QueryUnescape(sec)
		record(sec)
		if r.PostForm.Has("client_secret") || r.PostForm.Has("client_assertion") {
			fail("credentials in body with basic", sec)
			return
		}
		if id != ccClientID || sec != a.currentSecret() {
			fail("bad basic credentials", sec)
			return
		}
	case MethodClientSecretPost:
		sec := r.PostForm.Get("client_secret")
		record(sec)
		if r.Header.Get("Authorization") != "" {
			fail("authorization header with post", sec)
			return
		}
		if r.PostForm.Get("client_id") != ccClientID || sec != a.currentSecret() {
			fail("bad post credentials", sec)
			return
		}
	case MethodPrivateKeyJWT:
		assertion := r.PostForm.Get("client_assertion")
		record(assertion)
		if r.Header.Get("Authorization") != "" || r.PostForm.Has("client_secret") {
			fail("secret with private_key_jwt", assertion)
			return
		}
		if r.PostForm.Get("client_assertion_type") != clientAssertionType {
			fail("bad client_assertion_type", assertion)
			return
		}
		if cid := r.PostForm.Get("client_id"); cid != "" && cid != ccClientID {
			fail("bad client_id", assertion)
			return
		}
		iss := strings.TrimSuffix(a.issuer, "/")
		tok, err := jwt.Parse(assertion,
			func(*jwt.Token) (any, error) { return a.pub, nil },
			jwt.WithValidMethods([]string{a.alg}),
			jwt.WithIssuer(ccClientID),
			jwt.WithSubject(ccClientID),
			jwt.WithAudience(iss, iss+"/"),
			jwt.WithExpirationRequired(),
			jwt.WithIssuedAt(),
		)
		if err != nil {
			fail("bad assertion: "+err.Error(), assertion)
			return
		}
		claims := tok.Claims.(jwt.MapClaims)
		if _, ok := claims["aud"].(string); !ok {
			fail("aud is not a string", assertion)
			return
		}
		jti, _ := claims["jti"].(string)
		exp, _ := claims.GetExpirationTime()
		iat, _ := claims.GetIssuedAt()
		if jti == "" || iat == nil || exp.Sub(iat.Time) <= 0 || exp.Sub(iat.Time) > 5*time.Minute {
			fail("bad jti/iat/exp", assertion)
			return
		}
		a.mu.Lock()
		replay := a.seenJTI[jti]
		a.seenJTI[jti] = true
		a.jtis = append(a.jtis, jti)
		a.mu.Unlock()
		if replay {
			fail("replayed jti", assertion)
			return
		}
	}
	a.mu.Lock()
	at := fmt.Sprintf("%s%d", ccAccessTokenPrefix, len(a.issued))
	a.issued[at] = true
	scope := r.PostForm.Get("scope")
	a.scopes = append(a.scopes, scope)
	a.mu.Unlock()
	resp := map[string]any{"access_token": at, "token_type": "Bearer"}
	if a.expiresIn > 0 {
		resp["expires_in"] = a.expiresIn
	}
	if scope != "" {
		resp["scope"] = scope
	}
	ccWriteJSON(w, http.StatusOK, resp)
}

func (a *ccAuthServer) currentSecret() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.secret
}

func (a *ccAuthServer) valid(tok string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.issued[tok]
}

// snapshot returns copies of the recorded state.
func (a *ccAuthServer) snapshot() (requests int, jtis, scopes, failures, received []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.requests, slices.Clone(a.jtis), slices.Clone(a.scopes), slices.Clone(a.failures), slices.Clone(a.received)
}

// ---------------------------------------------------------------------------
// Test environment: authorization server + MCP resource server

type ccEnvConfig struct {
	method        string
	key           *ccKey // the client's key; the AS trusts its public key
	expiresIn     int    // 0: 3600
	prmMode       string // "hint" (default), "path", "root", "none" (2025-03-26 fallback)
	prmScopes     []string
	noASMetadata  bool
	issuerSlash   bool   // the metadata issuer has a trailing slash
	tokenEndpoint string // overrides the published token endpoint
	redirectToken bool
	plainErrors   bool
	hintURL       string // overrides the resource_metadata URL in the challenge
}

type ccEnv struct {
	as        *ccAuthServer
	mcpURL    string
	rsURL     string
	prmURL    string
	hintURL   string
	usedMu    sync.Mutex
	usedToken []string
}

func ccUnstarted(t *testing.T, h http.Handler) (*httptest.Server, string) {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	return srv, "http://" + srv.Listener.Addr().String()
}

func newCCEnv(t *testing.T, cfg ccEnvConfig) *ccEnv {
	t.Helper()
	if cfg.prmMode == "" {
		cfg.prmMode = "hint"
	}
	if cfg.expiresIn == 0 {
		cfg.expiresIn = 3600
	}
	e := &ccEnv{}
	a := &ccAuthServer{
		method:        cfg.method,
		secret:        ccSecretMarker,
		expiresIn:     cfg.expiresIn,
		noMetadata:    cfg.noASMetadata,
		redirectToken: cfg.redirectToken,
		plainErrors:   cfg.plainErrors,
		issued:        map[string]bool{},
		seenJTI:       map[string]bool{},
	}
	if cfg.key != nil {
		a.pub = cfg.key.signer.Public()
		a.alg = cfg.key.alg
	}
	e.as = a

	rsMux := http.NewServeMux()
	rsSrv, rsURL := ccUnstarted(t, rsMux)
	e.rsURL = rsURL
	e.mcpURL = rsURL + "/mcp"

	if cfg.prmMode == "none" {
		// The MCP server root is the authorization server.
		a.issuer = rsURL
		a.register(rsMux)
	} else {
		asMux := http.NewServeMux()
		asSrv, asURL := ccUnstarted(t, asMux)
		a.issuer = asURL
		a.register(asMux)
		asSrv.Start()
		t.Cleanup(asSrv.Close)
	}
	a.metaIssuer = a.issuer
	if cfg.issuerSlash {
		a.metaIssuer += "/"
	}
	a.tokenEndpoint = a.issuer + "/token"
	if cfg.tokenEndpoint != "" {
		a.tokenEndpoint = cfg.tokenEndpoint
	}

	prm := func(resource string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			ccWriteJSON(w, http.StatusOK, map[string]any{
				"resource":              resource,
				"authorization_servers": []string{a.issuer},
				"scopes_supported":      cfg.prmScopes,
			})
		}
	}
	switch cfg.prmMode {
	case "hint":
		e.prmURL = rsURL + "/custom/prm-document"
		rsMux.Handle("/custom/prm-document", prm(e.mcpURL))
		e.hintURL = e.prmURL
	case "path":
		e.prmURL = rsURL + "/.well-known/oauth-protected-resource/mcp"
		rsMux.Handle("/.well-known/oauth-protected-resource/mcp", prm(e.mcpURL))
	case "root":
		e.prmURL = rsURL + "/.well-known/oauth-protected-resource"
		rsMux.Handle("/.well-known/oauth-protected-resource", prm(rsURL))
	}
	if cfg.hintURL != "" {
		e.hintURL = cfg.hintURL
	}

	server := mcp.NewServer(&mcp.Implementation{Name: "protected", Version: "v0.0.1"}, nil)
	type whoamiOut struct {
		Greeting string `json:"greeting"`
	}
	mcp.AddTool(server, &mcp.Tool{Name: "whoami", Description: "says hello"},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, whoamiOut, error) {
			return nil, whoamiOut{Greeting: "hello machine"}, nil
		})
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	rsMux.Handle("/mcp", e.requireBearer(mcpHandler))
	rsSrv.Start()
	t.Cleanup(rsSrv.Close)
	return e
}

// requireBearer answers 401 with a resource_metadata challenge unless the
// request carries a token issued by the authorization server.
func (e *ccEnv) requireBearer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || !e.as.valid(tok) {
			challenge := "Bearer"
			if e.hintURL != "" {
				challenge = fmt.Sprintf("Bearer resource_metadata=%q", e.hintURL)
			}
			w.Header().Set("WWW-Authenticate", challenge)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		e.usedMu.Lock()
		e.usedToken = append(e.usedToken, tok)
		e.usedMu.Unlock()
		next.ServeHTTP(w, r)
	})
}

func (e *ccEnv) usedTokens() []string {
	e.usedMu.Lock()
	defer e.usedMu.Unlock()
	return slices.Clone(e.usedToken)
}

// unauthorized fabricates the 401 the transport would hand to Authorize.
func (e *ccEnv) unauthorized(t *testing.T) (*http.Request, *http.Response) {
	t.Helper()
	return ccFakeResponse(t, e.mcpURL, http.StatusUnauthorized, fmt.Sprintf("Bearer resource_metadata=%q", e.hintURL))
}

type ccBody struct {
	io.Reader
	closed atomic.Bool
}

func (b *ccBody) Close() error { b.closed.Store(true); return nil }

func ccFakeResponse(t *testing.T, target string, status int, challenge string) (*http.Request, *http.Response) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, target, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp := &http.Response{
		StatusCode: status,
		Header:     http.Header{},
		Body:       &ccBody{Reader: strings.NewReader("denied")},
		Request:    req,
	}
	if challenge != "" {
		resp.Header.Set("WWW-Authenticate", challenge)
	}
	return req, resp
}

func ccContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// ccCallTool connects to the MCP server with h and calls the tool n times.
func ccCallTool(ctx context.Context, mcpURL string, h auth.OAuthHandler, n int) error {
	client := mcp.NewClient(&mcp.Implementation{Name: "oauthflow-test", Version: "v0.0.1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: mcpURL, OAuthHandler: h}, nil)
	if err != nil {
		return err
	}
	defer cs.Close()
	for i := 0; i < n; i++ {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "whoami"})
		if err != nil {
			return err
		}
		if res.IsError {
			return fmt.Errorf("tool error: %v", res.Content)
		}
		b, _ := json.Marshal(res)
		if !strings.Contains(string(b), "hello machine") {
			return fmt.Errorf("unexpected tool result %s", b)
		}
	}
	return nil
}

// ccAssertNoSecrets fails if err mentions a planted marker, a key's material,
// or any credential the authorization server received.
func ccAssertNoSecrets(t *testing.T, err error, env *ccEnv) {
	t.Helper()
	if err == nil {
		return
	}
	forbidden := []string{
		ccSecretMarker, url.QueryEscape(ccSecretMarker),
		ccWrongSecretMarker, url.QueryEscape(ccWrongSecretMarker),
		ccAccessTokenPrefix, "MARKER-", "debug_echo",
	}
	for _, k := range ccKeys {
		forbidden = append(forbidden, ccPEMLines(k.pem)...)
	}
	if env != nil {
		_, _, _, _, received := env.as.snapshot()
		for _, r := range received {
			if len(r) >= 8 {
				forbidden = append(forbidden, r)
			}
		}
	}
	for _, msg := range []string{err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err)} {
		for _, f := range forbidden {
			if strings.Contains(msg, f) {
				t.Errorf("error leaks %q: %s", truncate(f, 24), msg)
			}
		}
	}
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		t.Errorf("error chain exposes an *oauth2.RetrieveError (with its body): %v", err)
	}
}

// ---------------------------------------------------------------------------
// Tests

func TestClientCredentialsMethods(t *testing.T) {
	tests := []struct {
		name   string
		method string
		key    string
		alg    string // explicit Algorithm; "" to infer
	}{
		{"client_secret_basic", MethodClientSecretBasic, "", ""},
		{"client_secret_post", MethodClientSecretPost, "", ""},
		{"private_key_jwt/ES256", MethodPrivateKeyJWT, "ec256", "ES256"},
		{"private_key_jwt/ES256-inferred", MethodPrivateKeyJWT, "ec256", ""},
		{"private_key_jwt/ES384", MethodPrivateKeyJWT, "ec384", "ES384"},
		{"private_key_jwt/RS256", MethodPrivateKeyJWT, "rsa", "RS256"},
		{"private_key_jwt/PS256", MethodPrivateKeyJWT, "rsa-pss", "PS256"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := ccEnvConfig{method: tt.method}
			cc := ClientCredentials{ClientID: ccClientID, Method: tt.method, Algorithm: tt.alg}
			if tt.key != "" {
				cfg.key = ccGetKey(t, tt.key)
				cc.PrivateKey = cfg.key.signer
			} else {
				cc.ClientSecret = ccSecretMarker
			}
			env := newCCEnv(t, cfg)
			h, err := NewClientCredentialsHandler(cc)
			if err != nil {
				t.Fatal(err)
			}
			if err := ccCallTool(ccContext(t), env.mcpURL, h, 2); err != nil {
				t.Fatalf("ccCallTool: %v", err)
			}
			requests, jtis, _, failures, _ := env.as.snapshot()
			if len(failures) > 0 {
				t.Errorf("authorization server rejected requests: %v", failures)
			}
			if requests != 1 {
				t.Errorf("token requests = %d, want 1 (the token is reused)", requests)
			}
			if tt.method == MethodPrivateKeyJWT && len(jtis) != 1 {
				t.Errorf("jtis = %v, want one", jtis)
			}
			if len(env.usedTokens()) == 0 {
				t.Error("the resource server saw no valid token")
			}
		})
	}
}

// TestClientCredentialsDiscovery covers the PRM discovery order, the
// 2025-03-26 fallbacks and an issuer published with a trailing slash (the
// assertion audience is the published issuer).
func TestClientCredentialsDiscovery(t *testing.T) {
	tests := []struct {
		name string
		cfg  ccEnvConfig
	}{
		{"resource_metadata hint", ccEnvConfig{prmMode: "hint"}},
		{"path-based well-known", ccEnvConfig{prmMode: "path"}},
		{"root well-known", ccEnvConfig{prmMode: "root"}},
		{"no PRM: server root is the AS", ccEnvConfig{prmMode: "none"}},
		{"no AS metadata: <as>/token", ccEnvConfig{prmMode: "path", noASMetadata: true}},
		{"no PRM and no AS metadata", ccEnvConfig{prmMode: "none", noASMetadata: true}},
		{"issuer with trailing slash", ccEnvConfig{prmMode: "hint", issuerSlash: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key := ccGetKey(t, "ec256")
			tt.cfg.method = MethodPrivateKeyJWT
			tt.cfg.key = key
			env := newCCEnv(t, tt.cfg)
			h, err := NewClientCredentialsHandler(ClientCredentials{
				ClientID: ccClientID, Method: MethodPrivateKeyJWT, PrivateKey: key.signer, Algorithm: "ES256",
				HTTPClient: &http.Client{Timeout: 10 * time.Second},
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := ccCallTool(ccContext(t), env.mcpURL, h, 1); err != nil {
				t.Fatalf("ccCallTool: %v", err)
			}
			if _, _, _, failures, _ := env.as.snapshot(); len(failures) > 0 {
				t.Errorf("authorization server rejected requests: %v", failures)
			}
		})
	}
}

func TestClientCredentialsWrongCredentials(t *testing.T) {
	tests := []struct {
		name      string
		method    string
		secret    string
		clientKey string // key the client signs with
		asKey     string // key the AS trusts
	}{
		{"client_secret_basic", MethodClientSecretBasic, ccWrongSecretMarker, "", ""},
		{"client_secret_post", MethodClientSecretPost, ccWrongSecretMarker, "", ""},
		{"private_key_jwt/unknown EC key", MethodPrivateKeyJWT, "", "ec256-other", "ec256"},
		{"private_key_jwt/unknown RSA key", MethodPrivateKeyJWT, "", "rsa", "ec256"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := ccEnvConfig{method: tt.method}
			cc := ClientCredentials{ClientID: ccClientID, Method: tt.method, ClientSecret: tt.secret}
			if tt.clientKey != "" {
				cfg.key = ccGetKey(t, tt.asKey)
				cc.PrivateKey = ccGetKey(t, tt.clientKey).signer
			}
			env := newCCEnv(t, cfg)
			h, err := NewClientCredentialsHandler(cc)
			if err != nil {
				t.Fatal(err)
			}
			err = ccCallTool(ccContext(t), env.mcpURL, h, 1)
			if err == nil {
				t.Fatal("ccCallTool succeeded with wrong credentials")
			}
			t.Logf("error: %v", err)
			var te *TokenError
			if !errors.As(err, &te) {
				t.Fatalf("error %v does not wrap a *TokenError", err)
			}
			if te.ErrorCode != "invalid_client" || te.StatusCode != http.StatusUnauthorized || te.ErrorDescription != "client authentication failed" {
				t.Errorf("TokenError = %+v", te)
			}
			if !strings.Contains(err.Error(), "invalid_client") {
				t.Errorf("error %q does not name the OAuth error code", err)
			}
			if _, _, _, failures, received := env.as.snapshot(); len(failures) == 0 || len(received) == 0 {
				t.Errorf("the token endpoint was not exercised: failures=%v", failures)
			}
			ccAssertNoSecrets(t, err, env)
			if ts, _ := h.TokenSource(context.Background()); ts != nil {
				t.Error("TokenSource is non-nil after a failed Authorize")
			}
		})
	}
}

// TestClientCredentialsOpaqueErrorBody: a token endpoint error without an
// OAuth error code is what oauth2.RetrieveError prints with its body.
func TestClientCredentialsOpaqueErrorBody(t *testing.T) {
	for _, method := range []string{MethodClientSecretBasic, MethodClientSecretPost, MethodPrivateKeyJWT} {
		t.Run(method, func(t *testing.T) {
			cfg := ccEnvConfig{method: method, plainErrors: true}
			cc := ClientCredentials{ClientID: ccClientID, Method: method}
			if method == MethodPrivateKeyJWT {
				cfg.key = ccGetKey(t, "ec256")
				cc.PrivateKey = ccGetKey(t, "ec256-other").signer
			} else {
				cc.ClientSecret = ccWrongSecretMarker
			}
			env := newCCEnv(t, cfg)
			h, err := NewClientCredentialsHandler(cc)
			if err != nil {
				t.Fatal(err)
			}
			err = ccCallTool(ccContext(t), env.mcpURL, h, 1)
			if err == nil {
				t.Fatal("callTool succeeded with wrong credentials")
			}
			var te *TokenError
			if !errors.As(err, &te) || te.StatusCode != http.StatusInternalServerError || te.ErrorCode != "" {
				t.Errorf("error = %v, want a TokenError with HTTP 500 and no code", err)
			}
			ccAssertNoSecrets(t, err, env)
		})
	}
}

func TestClientCredentialsRefusesInsecureTokenEndpoint(t *testing.T) {
	const insecure = "http://auth.example.com/oauth/token"
	env := newCCEnv(t, ccEnvConfig{method: MethodClientSecretPost, tokenEndpoint: insecure})
	h, err := NewClientCredentialsHandler(ClientCredentials{ClientID: ccClientID, Method: MethodClientSecretPost, ClientSecret: ccSecretMarker})
	if err != nil {
		t.Fatal(err)
	}
	err = ccCallTool(ccContext(t), env.mcpURL, h, 1)
	if err == nil {
		t.Fatal("ccCallTool succeeded with an http token endpoint")
	}
	if !strings.Contains(err.Error(), insecure) {
		t.Errorf("error %q does not name the token endpoint %s", err, insecure)
	}
	if requests, _, _, _, _ := env.as.snapshot(); requests != 0 {
		t.Errorf("token requests = %d, want 0", requests)
	}
	ccAssertNoSecrets(t, err, env)
}

func TestClientCredentialsRefusesInsecureMetadataURL(t *testing.T) {
	const insecure = "http://prm.example.com/.well-known/oauth-protected-resource"
	env := newCCEnv(t, ccEnvConfig{method: MethodClientSecretBasic, hintURL: insecure + "?sig=MARKER-query"})
	h, err := NewClientCredentialsHandler(ClientCredentials{ClientID: ccClientID, ClientSecret: ccSecretMarker})
	if err != nil {
		t.Fatal(err)
	}
	req, resp := env.unauthorized(t)
	err = h.Authorize(ccContext(t), req, resp)
	if err == nil {
		t.Fatal("Authorize succeeded with an http resource_metadata URL")
	}
	if !strings.Contains(err.Error(), insecure) || strings.Contains(err.Error(), "sig=") {
		t.Errorf("error %q should name %s without its query", err, insecure)
	}
	if !resp.Body.(*ccBody).closed.Load() {
		t.Error("response body not closed")
	}
	ccAssertNoSecrets(t, err, env)
}

func TestClientCredentialsDoesNotFollowTokenRedirects(t *testing.T) {
	env := newCCEnv(t, ccEnvConfig{method: MethodClientSecretPost, redirectToken: true})
	h, err := NewClientCredentialsHandler(ClientCredentials{ClientID: ccClientID, Method: MethodClientSecretPost, ClientSecret: ccSecretMarker})
	if err != nil {
		t.Fatal(err)
	}
	req, resp := env.unauthorized(t)
	err = h.Authorize(ccContext(t), req, resp)
	if err == nil {
		t.Fatal("Authorize followed the token endpoint redirect")
	}
	var te *TokenError
	if !errors.As(err, &te) || te.StatusCode != http.StatusTemporaryRedirect {
		t.Errorf("error = %v, want a TokenError with HTTP 307", err)
	}
	env.as.mu.Lock()
	hit := env.as.token2Hit
	env.as.mu.Unlock()
	if hit {
		t.Error("the redirect target received the credentials")
	}
	ccAssertNoSecrets(t, err, env)
}

// TestClientCredentialsRefreshNewJTI checks that every token request carries
// a fresh assertion: tokens expire at once, so each use refreshes.
func TestClientCredentialsRefreshNewJTI(t *testing.T) {
	key := ccGetKey(t, "rsa")
	env := newCCEnv(t, ccEnvConfig{method: MethodPrivateKeyJWT, key: key, expiresIn: 1})
	h, err := NewClientCredentialsHandler(ClientCredentials{ClientID: ccClientID, PrivateKey: key.signer, Algorithm: "RS256"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := ccContext(t)
	if err := ccCallTool(ctx, env.mcpURL, h, 2); err != nil {
		t.Fatalf("ccCallTool: %v", err)
	}

	ts, err := h.TokenSource(ctx)
	if err != nil || ts == nil {
		t.Fatalf("TokenSource = %v, %v", ts, err)
	}
	t1, err := ts.Token()
	if err != nil {
		t.Fatal(err)
	}
	t2, err := ts.Token()
	if err != nil {
		t.Fatal(err)
	}
	if t1.AccessToken == t2.AccessToken {
		t.Error("an expired token was not refreshed")
	}
	requests, jtis, _, failures, _ := env.as.snapshot()
	if len(failures) > 0 {
		t.Errorf("authorization server rejected requests: %v", failures)
	}
	if requests < 3 || len(jtis) != requests {
		t.Errorf("requests = %d, jtis = %d, want ≥ 3 and equal", requests, len(jtis))
	}
	seen := map[string]bool{}
	for _, j := range jtis {
		if seen[j] {
			t.Errorf("jti %q reused", j)
		}
		seen[j] = true
	}
	if used := env.usedTokens(); len(slices.Compact(slices.Sorted(slices.Values(used)))) < 2 {
		t.Errorf("resource server saw tokens %v, want several distinct", used)
	}
}

func TestClientCredentialsRefreshErrorIsSanitized(t *testing.T) {
	env := newCCEnv(t, ccEnvConfig{method: MethodClientSecretBasic, expiresIn: 1})
	h, err := NewClientCredentialsHandler(ClientCredentials{ClientID: ccClientID, ClientSecret: ccSecretMarker})
	if err != nil {
		t.Fatal(err)
	}
	req, resp := env.unauthorized(t)
	if err := h.Authorize(ccContext(t), req, resp); err != nil {
		t.Fatal(err)
	}
	// The secret is rotated at the AS: the next refresh fails.
	env.as.mu.Lock()
	env.as.secret = "rotated"
	env.as.mu.Unlock()
	ts, _ := h.TokenSource(context.Background())
	_, err = ts.Token()
	if err == nil {
		t.Fatal("refresh succeeded after the secret was rotated")
	}
	var te *TokenError
	if !errors.As(err, &te) || te.ErrorCode != "invalid_client" {
		t.Errorf("error = %v, want a TokenError invalid_client", err)
	}
	ccAssertNoSecrets(t, err, env)
}

func TestClientCredentialsScopes(t *testing.T) {
	prmScopes := []string{"mcp:tools", "mcp:read"}
	tests := []struct {
		name       string
		configured []string
		challenge  string
		want       string
	}{
		{"configured", []string{"a", "b"}, `scope="chal"`, "a b"},
		{"from challenge", nil, `scope="chal other"`, "chal other"},
		{"from PRM scopes_supported", nil, "", "mcp:tools mcp:read"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newCCEnv(t, ccEnvConfig{method: MethodClientSecretBasic, prmScopes: prmScopes})
			h, err := NewClientCredentialsHandler(ClientCredentials{ClientID: ccClientID, ClientSecret: ccSecretMarker, Scopes: tt.configured})
			if err != nil {
				t.Fatal(err)
			}
			challenge := fmt.Sprintf("Bearer resource_metadata=%q", env.hintURL)
			if tt.challenge != "" {
				challenge += ", " + tt.challenge
			}
			req, resp := ccFakeResponse(t, env.mcpURL, http.StatusUnauthorized, challenge)
			if err := h.Authorize(ccContext(t), req, resp); err != nil {
				t.Fatal(err)
			}
			if _, _, scopes, _, _ := env.as.snapshot(); !slices.Equal(scopes, []string{tt.want}) {
				t.Errorf("requested scopes %q, want %q", scopes, tt.want)
			}
		})
	}

	t.Run("step-up keeps granted scopes", func(t *testing.T) {
		env := newCCEnv(t, ccEnvConfig{method: MethodClientSecretPost, prmScopes: prmScopes})
		h, err := NewClientCredentialsHandler(ClientCredentials{ClientID: ccClientID, Method: MethodClientSecretPost, ClientSecret: ccSecretMarker, Scopes: []string{"a"}})
		if err != nil {
			t.Fatal(err)
		}
		ctx := ccContext(t)
		req, resp := env.unauthorized(t)
		if err := h.Authorize(ctx, req, resp); err != nil {
			t.Fatal(err)
		}
		req, resp = ccFakeResponse(t, env.mcpURL, http.StatusForbidden,
			fmt.Sprintf(`Bearer error="insufficient_scope", scope="admin", resource_metadata=%q`, env.hintURL))
		if err := h.Authorize(ctx, req, resp); err != nil {
			t.Fatal(err)
		}
		if _, _, scopes, _, _ := env.as.snapshot(); !slices.Equal(scopes, []string{"a", "a admin"}) {
			t.Errorf("requested scopes %q, want [a, a admin]", scopes)
		}
	})
}

func TestClientCredentialsForbiddenWithoutInsufficientScope(t *testing.T) {
	h, err := NewClientCredentialsHandler(ClientCredentials{ClientID: ccClientID, ClientSecret: ccSecretMarker})
	if err != nil {
		t.Fatal(err)
	}
	// Nothing listens there: any discovery attempt would fail.
	req, resp := ccFakeResponse(t, "http://127.0.0.1:1/mcp", http.StatusForbidden, `Bearer error="invalid_token"`)
	if err := h.Authorize(ccContext(t), req, resp); err != nil {
		t.Fatalf("Authorize = %v, want nil", err)
	}
	if !resp.Body.(*ccBody).closed.Load() {
		t.Error("response body not closed")
	}
	if ts, _ := h.TokenSource(context.Background()); ts != nil {
		t.Error("TokenSource is non-nil")
	}
}

func TestClientCredentialsTokenSourceNilBeforeAuthorize(t *testing.T) {
	h, err := NewClientCredentialsHandler(ClientCredentials{ClientID: ccClientID, ClientSecret: ccSecretMarker})
	if err != nil {
		t.Fatal(err)
	}
	ts, err := h.TokenSource(context.Background())
	if ts != nil || err != nil {
		t.Fatalf("TokenSource = %v, %v; want nil, nil", ts, err)
	}
}

func TestClientCredentialsConcurrent(t *testing.T) {
	key := ccGetKey(t, "ec256")
	env := newCCEnv(t, ccEnvConfig{method: MethodPrivateKeyJWT, key: key, expiresIn: 1})
	h, err := NewClientCredentialsHandler(ClientCredentials{ClientID: ccClientID, PrivateKey: key.signer})
	if err != nil {
		t.Fatal(err)
	}
	ctx := ccContext(t)
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := 0; i < 20; i++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			req, resp := env.unauthorized(t)
			if err := h.Authorize(ctx, req, resp); err != nil {
				errs <- err
			}
		}()
		go func() {
			defer wg.Done()
			ts, err := h.TokenSource(ctx)
			if err != nil {
				errs <- err
				return
			}
			if ts != nil {
				if _, err := ts.Token(); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if _, _, _, failures, _ := env.as.snapshot(); len(failures) > 0 {
		t.Errorf("authorization server rejected requests: %v", failures)
	}
}

func TestClientCredentialsAuthorizeHonoursContext(t *testing.T) {
	// A token endpoint that never answers in time.
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/token" {
			http.NotFound(w, r)
			return
		}
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(block)
	h, err := NewClientCredentialsHandler(ClientCredentials{ClientID: ccClientID, ClientSecret: ccSecretMarker})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	// No PRM and no AS metadata: the token endpoint is <server>/token.
	req, resp := ccFakeResponse(t, srv.URL+"/mcp", http.StatusUnauthorized, "Bearer")
	err = h.Authorize(ctx, req, resp)
	if err == nil {
		t.Fatal("Authorize succeeded")
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v does not wrap context.DeadlineExceeded", err)
	}
	ccAssertNoSecrets(t, err, nil)
}

func TestNewClientCredentialsHandlerValidation(t *testing.T) {
	ec := ccGetKey(t, "ec256").signer
	ec384 := ccGetKey(t, "ec384").signer
	rsaKey := ccGetKey(t, "rsa").signer
	small, _ := rsa.GenerateKey(rand.Reader, 1024)
	p521, _ := ecdsa.GenerateKey(elliptic.P521(), rand.Reader)
	_, ed, _ := ed25519.GenerateKey(rand.Reader)

	bad := []struct {
		name string
		cfg  ClientCredentials
	}{
		{"no client id", ClientCredentials{ClientSecret: ccSecretMarker}},
		{"unknown method", ClientCredentials{ClientID: "c", ClientSecret: ccSecretMarker, Method: "tls_client_auth"}},
		{"basic without secret", ClientCredentials{ClientID: "c", Method: MethodClientSecretBasic}},
		{"post without secret", ClientCredentials{ClientID: "c", Method: MethodClientSecretPost}},
		{"basic with key", ClientCredentials{ClientID: "c", Method: MethodClientSecretBasic, ClientSecret: ccSecretMarker, PrivateKey: ec}},
		{"post with algorithm", ClientCredentials{ClientID: "c", Method: MethodClientSecretPost, ClientSecret: ccSecretMarker, Algorithm: "ES256"}},
		{"jwt without key", ClientCredentials{ClientID: "c", Method: MethodPrivateKeyJWT}},
		{"jwt with secret", ClientCredentials{ClientID: "c", Method: MethodPrivateKeyJWT, PrivateKey: ec, ClientSecret: ccSecretMarker}},
		{"ES256 with RSA key", ClientCredentials{ClientID: "c", PrivateKey: rsaKey, Algorithm: "ES256"}},
		{"RS256 with EC key", ClientCredentials{ClientID: "c", PrivateKey: ec, Algorithm: "RS256"}},
		{"ES384 with P-256 key", ClientCredentials{ClientID: "c", PrivateKey: ec, Algorithm: "ES384"}},
		{"ES256 with P-384 key", ClientCredentials{ClientID: "c", PrivateKey: ec384, Algorithm: "ES256"}},
		{"HS256", ClientCredentials{ClientID: "c", PrivateKey: rsaKey, Algorithm: "HS256"}},
		{"none", ClientCredentials{ClientID: "c", PrivateKey: ec, Algorithm: "none"}},
		{"RSA 1024", ClientCredentials{ClientID: "c", PrivateKey: small}},
		{"P-521", ClientCredentials{ClientID: "c", PrivateKey: p521}},
		{"Ed25519", ClientCredentials{ClientID: "c", PrivateKey: ed}},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			h, err := NewClientCredentialsHandler(tt.cfg)
			if err == nil {
				t.Fatalf("NewClientCredentialsHandler succeeded: %+v", h)
			}
			ccAssertNoSecrets(t, err, nil)
		})
	}

	good := []struct {
		name       string
		cfg        ClientCredentials
		wantMethod string
		wantAlg    string
	}{
		{"default basic", ClientCredentials{ClientID: "c", ClientSecret: "s"}, MethodClientSecretBasic, ""},
		{"default jwt EC", ClientCredentials{ClientID: "c", PrivateKey: ec}, MethodPrivateKeyJWT, "ES256"},
		{"default jwt P-384", ClientCredentials{ClientID: "c", PrivateKey: ec384}, MethodPrivateKeyJWT, "ES384"},
		{"default jwt RSA", ClientCredentials{ClientID: "c", PrivateKey: rsaKey}, MethodPrivateKeyJWT, "RS256"},
		{"PS256", ClientCredentials{ClientID: "c", Method: MethodPrivateKeyJWT, PrivateKey: rsaKey, Algorithm: "PS256"}, MethodPrivateKeyJWT, "PS256"},
	}
	for _, tt := range good {
		t.Run(tt.name, func(t *testing.T) {
			h, err := NewClientCredentialsHandler(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if h.method != tt.wantMethod {
				t.Errorf("method = %q, want %q", h.method, tt.wantMethod)
			}
			var alg string
			if h.signing != nil {
				alg = h.signing.Alg()
			}
			if alg != tt.wantAlg {
				t.Errorf("alg = %q, want %q", alg, tt.wantAlg)
			}
		})
	}
}

func TestTokenErrorMessage(t *testing.T) {
	te := &TokenError{TokenURL: "https://as.example.com/token", StatusCode: 400, ErrorCode: "invalid_scope", ErrorDescription: "nope"}
	if got, want := te.Error(), `token endpoint https://as.example.com/token answered HTTP 400: invalid_scope ("nope")`; !strings.Contains(got, want) {
		t.Errorf("Error() = %q, want it to contain %q", got, want)
	}
	te = &TokenError{TokenURL: "https://as.example.com/token", StatusCode: 500}
	if got := te.Error(); !strings.HasSuffix(got, "answered HTTP 500") {
		t.Errorf("Error() = %q", got)
	}
}

// A background request (a keepalive probe) refused with a 401 fetches no
// token: Authorize fails at once with ErrLoginNotTried (the server
// answered); a call then fetches the token.
func TestClientCredentialsWithoutLoginFetchesNoToken(t *testing.T) {
	env := newCCEnv(t, ccEnvConfig{method: MethodClientSecretPost})
	h, err := NewClientCredentialsHandler(ClientCredentials{ClientID: ccClientID, Method: MethodClientSecretPost, ClientSecret: ccSecretMarker})
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(ccContext(t), http.MethodPost, env.mcpURL, strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusUnauthorized {
		resp.Body.Close()
		t.Fatalf("the resource server answered %d without a token, want 401", resp.StatusCode)
	}
	if err := h.Authorize(WithoutLogin(ccContext(t)), req, resp); !errors.Is(err, ErrLoginNotTried) {
		t.Errorf("Authorize of a background request = %v, want ErrLoginNotTried", err)
	}
	if requests, _, _, _, _ := env.as.snapshot(); requests != 0 {
		t.Errorf("a background request's 401 made %d token requests, want none", requests)
	}
	if src, _ := h.TokenSource(ccContext(t)); src != nil {
		t.Error("a background request's 401 left a token source")
	}
	if err := ccCallTool(ccContext(t), env.mcpURL, h, 1); err != nil {
		t.Fatalf("a call afterwards: %v", err)
	}
}
