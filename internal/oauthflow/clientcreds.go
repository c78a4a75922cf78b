// Package oauthflow implements OAuth flows for MCP client connections.
package oauthflow

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/openprogram/mcpvisor/internal/redact"
)

// Token endpoint client authentication methods (RFC 7591 §2, OpenID Connect
// Core §9) supported by [ClientCredentialsHandler].
const (
	MethodClientSecretBasic = "client_secret_basic"
	MethodClientSecretPost  = "client_secret_post"
	MethodPrivateKeyJWT     = "private_key_jwt"
)

// clientAssertionType is the client_assertion_type of RFC 7523 §2.2.
const clientAssertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

const (
	// assertionLifetime is the validity of a private_key_jwt assertion.
	assertionLifetime = 5 * time.Minute
	// refreshTimeout bounds a token request made outside Authorize (a
	// refresh), which has no caller context of its own.
	refreshTimeout = 60 * time.Second
	// maxDrain bounds how much of a 401/403 body is drained for connection reuse.
	maxDrain = 64 << 10
)

// ClientCredentials configures the OAuth client credentials grant (machine to
// machine, SEP-1046).
type ClientCredentials struct {
	ClientID     string
	ClientSecret string        // for client_secret_basic / client_secret_post
	PrivateKey   crypto.Signer // for private_key_jwt: *ecdsa.PrivateKey or *rsa.PrivateKey (config.Auth.Signer)
	// Method is "client_secret_basic", "client_secret_post" or
	// "private_key_jwt". If empty, it is private_key_jwt when PrivateKey is
	// set and client_secret_basic otherwise.
	Method string
	// Algorithm is "ES256", "ES384", "RS256" or "PS256" (private_key_jwt
	// only). If empty, it follows the key: ES256 for P-256, ES384 for P-384,
	// RS256 for RSA.
	Algorithm string
	// Scopes are the requested scopes. If empty, the scope of the
	// WWW-Authenticate challenge is used, else the protected resource
	// metadata's scopes_supported, like the SDK.
	Scopes []string
	// HTTPClient is used for discovery and the token endpoint.
	// If nil, http.DefaultClient is used. Redirects are never followed for
	// token requests.
	HTTPClient *http.Client
	// Scrubber learns the client secret, every client assertion and every
	// token obtained (current and previous) and scrubs the handler's
	// errors with them. The connection passes its own, so that its errors
	// and logs lose them too. Default: one of the handler's own.
	Scrubber *redact.Scrubber
}

// ClientCredentialsHandler is an [auth.OAuthHandler] that obtains access
// tokens with the client credentials grant (RFC 6749 §4.4), authenticating
// the client with a secret (client_secret_basic, client_secret_post) or a
// signed JWT assertion (private_key_jwt, RFC 7523). The authorization server
// and its token endpoint are discovered from the protected resource metadata
// (RFC 9728) and the authorization server metadata (RFC 8414).
//
// It is safe for concurrent use.
type ClientCredentialsHandler struct {
	clientID    string
	secret      string
	key         crypto.Signer
	method      string
	signing     jwt.SigningMethod // private_key_jwt only
	scopes      []string
	httpClient  *http.Client // discovery; nil means the SDK default
	tokenClient *http.Client // token requests; never follows redirects
	scrub       *redact.Scrubber

	// authSem serialises Authorize calls (a buffered channel so that waiting
	// honours the context).
	authSem chan struct{}

	mu            sync.Mutex
	tokenSource   oauth2.TokenSource
	grantedScopes map[string][]string // by issuer without trailing slash
}

var _ auth.OAuthHandler = (*ClientCredentialsHandler)(nil)

// NewClientCredentialsHandler validates cfg and returns a handler for it.
// cfg.Scopes is copied; the key and HTTP client are used as given.
func NewClientCredentialsHandler(cfg ClientCredentials) (*ClientCredentialsHandler, error) {
	if cfg.ClientID == "" {
		return nil, errors.New("oauthflow: client credentials: client ID is required")
	}
	method := cfg.Method
	if method == "" {
		if cfg.PrivateKey != nil {
			method = MethodPrivateKeyJWT
		} else {
			method = MethodClientSecretBasic
		}
	}
	h := &ClientCredentialsHandler{
		clientID:      cfg.ClientID,
		method:        method,
		scopes:        slices.Clone(cfg.Scopes),
		httpClient:    cfg.HTTPClient,
		authSem:       make(chan struct{}, 1),
		grantedScopes: make(map[string][]string),
		scrub:         cfg.Scrubber,
	}
	if h.scrub == nil {
		h.scrub = redact.New()
	}
	switch method {
	case MethodClientSecretBasic, MethodClientSecretPost:
		if cfg.ClientSecret == "" {
			return nil, fmt.Errorf("oauthflow: client credentials: %s requires a client secret", method)
		}
		if cfg.PrivateKey != nil {
			return nil, fmt.Errorf("oauthflow: client credentials: a private key is only used with %s, not %s", MethodPrivateKeyJWT, method)
		}
		if cfg.Algorithm != "" {
			return nil, fmt.Errorf("oauthflow: client credentials: an algorithm is only used with %s, not %s", MethodPrivateKeyJWT, method)
		}
		h.secret = cfg.ClientSecret
		// client_secret_basic sends both form-encoded, then base64 of the
		// pair (RFC 6749 §2.3.1). That base64 is a secret of its own: a
		// server echoing the header may encode it again, and the scrubber
		// derives the encoded forms of each value it learns.
		pair := url.QueryEscape(cfg.ClientID) + ":" + url.QueryEscape(cfg.ClientSecret)
		h.scrub.Learn(cfg.ClientSecret, pair, base64.StdEncoding.EncodeToString([]byte(pair)))
	case MethodPrivateKeyJWT:
		if cfg.PrivateKey == nil {
			return nil, fmt.Errorf("oauthflow: client credentials: %s requires a private key", method)
		}
		if cfg.ClientSecret != "" {
			return nil, fmt.Errorf("oauthflow: client credentials: a client secret is not used with %s", method)
		}
		sm, err := signingMethodFor(cfg.PrivateKey, cfg.Algorithm)
		if err != nil {
			return nil, err
		}
		h.key = cfg.PrivateKey
		h.signing = sm
	default:
		return nil, fmt.Errorf("oauthflow: client credentials: unsupported token endpoint auth method %q (want %s, %s or %s)",
			method, MethodClientSecretBasic, MethodClientSecretPost, MethodPrivateKeyJWT)
	}
	base := cfg.HTTPClient
	if base == nil {
		base = http.DefaultClient
	}
	tc := *base
	// A redirect would resend the credentials to wherever it points.
	tc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	h.tokenClient = &tc
	return h, nil
}

// signingMethodFor checks that key suits alg (inferring alg from the key when
// empty) and returns the JWT signing method.
func signingMethodFor(key crypto.Signer, alg string) (jwt.SigningMethod, error) {
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		var want string
		switch k.Curve {
		case elliptic.P256():
			want = "ES256"
		case elliptic.P384():
			want = "ES384"
		default:
			return nil, errors.New("oauthflow: client credentials: unsupported EC curve (want P-256 for ES256 or P-384 for ES384)")
		}
		if alg == "" {
			alg = want
		}
		if alg != want {
			if alg == "ES256" || alg == "ES384" {
				return nil, fmt.Errorf("oauthflow: client credentials: algorithm %s needs a %s key, got %s", alg, curveFor(alg), k.Curve.Params().Name)
			}
			return nil, fmt.Errorf("oauthflow: client credentials: algorithm %q does not match an EC private key (want %s)", alg, want)
		}
	case *rsa.PrivateKey:
		if k.N.BitLen() < 2048 {
			return nil, fmt.Errorf("oauthflow: client credentials: RSA key of %d bits is too small (minimum 2048)", k.N.BitLen())
		}
		if alg == "" {
			alg = "RS256"
		}
		if alg != "RS256" && alg != "PS256" {
			return nil, fmt.Errorf("oauthflow: client credentials: algorithm %q does not match an RSA private key (want RS256 or PS256)", alg)
		}
	default:
		return nil, fmt.Errorf("oauthflow: client credentials: unsupported private key type %T (want ECDSA P-256/P-384 or RSA)", key)
	}
	switch alg {
	case "ES256":
		return jwt.SigningMethodES256, nil
	case "ES384":
		return jwt.SigningMethodES384, nil
	case "RS256":
		return jwt.SigningMethodRS256, nil
	case "PS256":
		return jwt.SigningMethodPS256, nil
	}
	return nil, fmt.Errorf("oauthflow: client credentials: unsupported algorithm %q", alg)
}

func curveFor(alg string) string {
	if alg == "ES384" {
		return "P-384"
	}
	return "P-256"
}

// TokenSource returns the token source for outgoing requests, or nil before
// the first successful Authorize.
func (h *ClientCredentialsHandler) TokenSource(context.Context) (oauth2.TokenSource, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.tokenSource, nil
}

// Authorize is called by the transport after a 401 or 403 response. It
// discovers the authorization server and obtains a token with the client
// credentials grant. A 403 whose challenge is not insufficient_scope returns
// nil at once, like the SDK. A request marked WithoutLogin (a keepalive
// probe) fetches no token: it fails at once with ErrLoginNotTried, so a
// 401 to a probe is the server's answer, and a call fetches the token. It
// closes resp.Body.
func (h *ClientCredentialsHandler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	if resp == nil {
		return errors.New("oauthflow: client credentials: Authorize called without a response")
	}
	if resp.Body != nil {
		defer resp.Body.Close()
		defer io.Copy(io.Discard, io.LimitReader(resp.Body, maxDrain))
	}
	if loginBarred(ctx) {
		return ErrLoginNotTried
	}
	if req == nil || req.URL == nil {
		return errors.New("oauthflow: client credentials: Authorize called without a request")
	}

	cs, err := parseChallenges(resp)
	if err != nil {
		return fmt.Errorf("oauthflow: client credentials: %w", err)
	}
	if resp.StatusCode == http.StatusForbidden && !isStepUpChallenge(resp, cs) {
		// Only insufficient_scope calls for a new token; the retried request
		// gets the 403 again and the connection reports it.
		return nil
	}

	select {
	case h.authSem <- struct{}{}:
		defer func() { <-h.authSem }()
	case <-ctx.Done():
		return ctx.Err()
	}

	prm, err := discoverProtectedResource(ctx, h.httpClient, cs, req.URL.String())
	if err != nil {
		return fmt.Errorf("oauthflow: client credentials: %w", err)
	}
	asm, err := discoverAuthServer(ctx, h.httpClient, prm)
	if err != nil {
		return fmt.Errorf("oauthflow: client credentials: %w", err)
	}

	scopes := h.scopes
	challenged := scopesFromChallenges(cs)
	switch {
	case len(scopes) == 0 && len(challenged) > 0:
		scopes = challenged
	case len(scopes) == 0:
		scopes = prm.ScopesSupported
	case isStepUpChallenge(resp, cs):
		scopes = unionScopes(scopes, challenged)
	}
	issuerKey := strings.TrimSuffix(asm.Issuer, "/")
	h.mu.Lock()
	granted := h.grantedScopes[issuerKey]
	h.mu.Unlock()
	// Keep what earlier rounds were granted (step-up, SEP-2350).
	scopes = unionScopes(granted, scopes)

	f := &tokenFetcher{h: h, tokenURL: asm.TokenEndpoint, audience: asm.Issuer, scopes: scopes}
	tok, err := f.fetch(ctx)
	if err != nil {
		return err
	}
	ts := oauth2.ReuseTokenSource(tok, &refreshingSource{f: f, ctx: context.WithoutCancel(ctx)})

	h.mu.Lock()
	defer h.mu.Unlock()
	h.tokenSource = ts
	if gs := scopesFromToken(tok); gs != nil {
		h.grantedScopes[issuerKey] = gs
	} else {
		h.grantedScopes[issuerKey] = scopes
	}
	return nil
}

// tokenFetcher performs one client credentials token request per fetch, with
// a fresh client assertion for private_key_jwt.
type tokenFetcher struct {
	h        *ClientCredentialsHandler
	tokenURL string
	audience string // authorization server issuer, the assertion's aud
	scopes   []string
}

func (f *tokenFetcher) fetch(ctx context.Context) (*oauth2.Token, error) {
	h := f.h
	cc := &clientcredentials.Config{
		ClientID: h.clientID,
		TokenURL: f.tokenURL,
		Scopes:   f.scopes,
	}
	var assertion string
	switch h.method {
	case MethodClientSecretBasic:
		cc.ClientSecret = h.secret
		cc.AuthStyle = oauth2.AuthStyleInHeader
	case MethodClientSecretPost:
		cc.ClientSecret = h.secret
		cc.AuthStyle = oauth2.AuthStyleInParams
	case MethodPrivateKeyJWT:
		var err error
		assertion, err = h.newAssertion(f.audience)
		if err != nil {
			return nil, err
		}
		h.scrub.Learn(assertion)
		cc.AuthStyle = oauth2.AuthStyleInParams
		cc.EndpointParams = url.Values{
			"client_assertion_type": {clientAssertionType},
			"client_assertion":      {assertion},
		}
	}
	tok, err := cc.Token(context.WithValue(ctx, oauth2.HTTPClient, h.tokenClient))
	if err != nil {
		return nil, f.sanitize(err)
	}
	// Kept for the life of the connection: a server may still echo a
	// token after it was replaced.
	h.scrub.Learn(tok.AccessToken, tok.RefreshToken)
	return tok, nil
}

// newAssertion returns a signed RFC 7523 client assertion for audience.
func (h *ClientCredentialsHandler) newAssertion(audience string) (string, error) {
	now := time.Now()
	claims := jwt.MapClaims{
		"iss": h.clientID,
		"sub": h.clientID,
		"aud": audience, // a plain string, not a one-element array
		"jti": rand.Text(),
		"iat": now.Unix(),
		"exp": now.Add(assertionLifetime).Unix(),
	}
	s, err := jwt.NewWithClaims(h.signing, claims).SignedString(h.key)
	if err != nil {
		// Signing errors describe the key type, never its contents.
		return "", fmt.Errorf("oauthflow: client credentials: signing the client assertion failed: %v", err)
	}
	return s, nil
}

// sanitize converts a token request error into one that shows neither the
// response body nor any credential.
func (f *tokenFetcher) sanitize(err error) error {
	where := redact.URL(f.tokenURL, false)
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		te := &TokenError{
			TokenURL:         where,
			ErrorCode:        f.h.scrub.String(re.ErrorCode),
			ErrorDescription: f.h.scrub.String(re.ErrorDescription),
			ErrorURI:         f.h.scrub.String(re.ErrorURI),
		}
		if re.Response != nil {
			te.StatusCode = re.Response.StatusCode
		}
		return te
	}
	msg := strings.ReplaceAll(err.Error(), f.tokenURL, where)
	text := fmt.Sprintf("oauthflow: client credentials: token request to %s failed: %s", where, msg)
	switch {
	case errors.Is(err, context.Canceled):
		text += ": " + context.Canceled.Error()
	case errors.Is(err, context.DeadlineExceeded):
		text += ": " + context.DeadlineExceeded.Error()
	}
	return f.h.scrub.ErrorText(text, err, sentinels...)
}

// TokenError is a token endpoint error response (RFC 6749 §5.2). Unlike
// oauth2.RetrieveError it carries neither the response body nor the request.
type TokenError struct {
	TokenURL         string // without query
	StatusCode       int    // 0 if unknown
	ErrorCode        string // e.g. "invalid_client"; empty if the body had none
	ErrorDescription string
	ErrorURI         string
}

func (e *TokenError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "oauthflow: client credentials: token endpoint %s", e.TokenURL)
	if e.StatusCode != 0 {
		fmt.Fprintf(&b, " answered HTTP %d", e.StatusCode)
	} else {
		b.WriteString(" refused the request")
	}
	if e.ErrorCode != "" {
		fmt.Fprintf(&b, ": %s", e.ErrorCode)
		if e.ErrorDescription != "" {
			fmt.Fprintf(&b, " (%q)", truncate(e.ErrorDescription, 256))
		}
	} else if e.StatusCode >= 300 && e.StatusCode < 400 {
		b.WriteString(" (redirects are not followed for token requests)")
	}
	return b.String()
}

// refreshingSource fetches a new token, with a new assertion, each time the
// oauth2.ReuseTokenSource wrapping it finds the cached token expired.
type refreshingSource struct {
	f   *tokenFetcher
	ctx context.Context // Authorize's context without its cancellation
}

func (s *refreshingSource) Token() (*oauth2.Token, error) {
	ctx, cancel := context.WithTimeout(s.ctx, refreshTimeout)
	defer cancel()
	return s.f.fetch(ctx)
}
