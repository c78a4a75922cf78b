// Package oauthflow builds the go-sdk OAuth handlers of a remote server:
// the authorization code flow (A2) with its tokens persisted and refreshed
// in the background (A3), and the client credentials grant. The go-sdk
// auth package does the protocol; this package decides when a browser may
// open, what is stored, and which failures need the user.
package oauthflow

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/openprogram/mcpvisor/tokenstore"
)

// ErrNeedsReauth: the stored login can no longer be used (the refresh was
// refused, or a login failed) and only the user can fix it by logging in
// again. Nothing retries it automatically, so no browser ever loops.
var ErrNeedsReauth = errors.New("login required")

// ErrLoginCancelled: a login was abandoned before the authorization server
// redirected back (shutdown, delete, disable, restart or timeout).
var ErrLoginCancelled = errors.New("login cancelled")

// Login runs one interactive login: it sends the user to req.URL and waits
// for the authorization server to redirect to req.RedirectURI. It returns
// the code, state and iss of that redirect, or an error; it never invents
// them.
type Login func(ctx context.Context, req LoginRequest) (*auth.AuthorizationResult, error)

// LoginRequest is one interactive login.
type LoginRequest struct {
	URL         string // the authorization URL
	RedirectURI string // the loopback redirect it names
	// Listener, if set, is already bound to the redirect's port: the
	// login takes it over (and closes it). A first login's port is held
	// from the moment it is chosen, so no other socket can take it
	// between registration and redirect.
	Listener net.Listener
}

// AuthCodeConfig configures [NewAuthCode].
type AuthCodeConfig struct {
	// Server is the server's name, the key of its stored login.
	Server string
	// URL is the server's MCP endpoint.
	URL string
	// ClientID and ClientSecret are a pre-registered client, if any.
	ClientID, ClientSecret string
	// ClientMetadataURL is a Client ID Metadata Document URL, if any.
	ClientMetadataURL string
	// Scopes, if set, replace the scopes discovered from the server.
	Scopes []string
	// Store keeps the login across restarts.
	Store tokenstore.Store
	// Login opens the browser and waits for the redirect.
	Login Login
	// HTTPClient is used for discovery, registration and tokens. Default:
	// a client over http.DefaultTransport. Either way, only https and
	// loopback URLs are allowed.
	HTTPClient *http.Client
	// Logger receives login and refresh events (never a token).
	Logger *slog.Logger
	// Go runs the background refresher; the owner waits for it.
	Go func(func())
	// OnRefused is called once when a refresh is refused: the connection
	// should end with the error, which matches ErrNeedsReauth.
	OnRefused func(error)
}

// AuthCode is the OAuth handler of one connection of an oauth server: the
// SDK's AuthorizationCodeHandler with persistence, background refresh, and
// a rule for when a browser may open: a first login (no usable stored
// token) and a step-up to more scopes, never to replace a refused refresh.
type AuthCode struct {
	cfg         AuthCodeConfig
	redirect    string
	interactive bool // this connection began without a usable token
	reused      bool // the first handler offers the stored registered client
	logins      atomic.Int32
	capture     *metadataCapture
	refresher   *refresher

	mu       sync.Mutex
	reserved net.Listener // the first login's port, until that login takes it
	inner    *auth.AuthorizationCodeHandler
	source   *tokenSource
	stored   *tokenstore.Record
	closed   bool
}

var _ auth.OAuthHandler = (*AuthCode)(nil)

// maxLogins bounds the logins of one connection: a server that keeps
// refusing fresh tokens must not keep opening the browser.
const maxLogins = 3

// NewAuthCode returns the handler for one connection. It reads the stored
// login; a stored token for the same URL is used without a browser.
func NewAuthCode(cfg AuthCodeConfig) (*AuthCode, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Go == nil {
		cfg.Go = func(f func()) { go f() }
	}
	rec, err := cfg.Store.Load(cfg.Server)
	if err != nil {
		cfg.Logger.Warn("ignoring the stored login", "error", err)
		rec = nil
	}
	if rec != nil && rec.ServerURL != cfg.URL {
		rec = nil // a login for another URL: the next one replaces it
	}
	h := &AuthCode{cfg: cfg, stored: rec}
	base := http.DefaultTransport
	if cfg.HTTPClient != nil && cfg.HTTPClient.Transport != nil {
		base = cfg.HTTPClient.Transport
	}
	h.capture = &metadataCapture{base: secureTransport{base: base}}
	h.refresher = newRefresher(cfg.Go, cfg.Logger)

	if rec != nil && rec.Client != nil && rec.Client.RedirectURI != "" {
		h.redirect = rec.Client.RedirectURI
	} else if h.redirect, h.reserved, err = reserveRedirect(); err != nil {
		return nil, err
	}
	var initial oauth2.TokenSource
	if rec != nil && rec.Token != nil && rec.Client != nil && rec.AuthServer != nil && rec.AuthServer.TokenEndpoint != "" {
		oc := &oauth2.Config{
			ClientID:     rec.Client.ClientID,
			ClientSecret: rec.Client.ClientSecret,
			Endpoint: oauth2.Endpoint{
				AuthURL:   rec.AuthServer.AuthorizationEndpoint,
				TokenURL:  rec.AuthServer.TokenEndpoint,
				AuthStyle: oauth2.AuthStyle(rec.Client.AuthStyle),
			},
			RedirectURL: rec.Client.RedirectURI,
		}
		h.source = h.newSource(oc, fromStored(rec.Token))
		initial = h.source
	}
	h.interactive = initial == nil
	reuse := h.storedClient()
	h.reused = reuse != nil
	if h.inner, err = h.newInner(initial, reuse); err != nil {
		return nil, err
	}
	if h.source != nil {
		h.refresher.watch(h.source)
	}
	return h, nil
}

// storedClient is the dynamically registered client of the stored login,
// reused so the authorization server sees one client per server, not one
// per connection. It is bound to its issuer, so it is never offered to
// another authorization server.
func (h *AuthCode) storedClient() *oauthex.ClientCredentials {
	rec := h.stored
	if h.cfg.ClientID != "" || rec == nil || rec.Client == nil || !rec.Client.Registered || rec.AuthServer == nil || rec.AuthServer.Issuer == "" {
		return nil
	}
	cc := &oauthex.ClientCredentials{ClientID: rec.Client.ClientID, Issuer: rec.AuthServer.Issuer}
	if rec.Client.ClientSecret != "" {
		cc.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: rec.Client.ClientSecret}
	}
	return cc
}

func (h *AuthCode) newInner(initial oauth2.TokenSource, reuse *oauthex.ClientCredentials) (*auth.AuthorizationCodeHandler, error) {
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL: h.redirect,
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			h.cfg.Logger.Info("login required: waiting for the browser")
			h.mu.Lock()
			ln := h.reserved
			h.reserved = nil
			h.mu.Unlock()
			return h.cfg.Login(ctx, LoginRequest{URL: args.URL, RedirectURI: h.redirect, Listener: ln})
		},
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{
			Metadata: &oauthex.ClientRegistrationMetadata{
				RedirectURIs:  []string{h.redirect},
				ClientName:    "mcpvisor",
				GrantTypes:    []string{"authorization_code", "refresh_token"},
				ResponseTypes: []string{"code"},
			},
		},
		RequestRefreshToken: true,
		Client:              &http.Client{Transport: h.capture, CheckRedirect: noRedirectedPosts},
		NewTokenSource: func(ctx context.Context, oc *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
			return h.loggedIn(oc, tok), nil
		},
		InitialTokenSource: initial,
	}
	if h.cfg.ClientMetadataURL != "" {
		cfg.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: h.cfg.ClientMetadataURL}
	}
	switch {
	case h.cfg.ClientID != "":
		cfg.PreregisteredClient = &oauthex.ClientCredentials{ClientID: h.cfg.ClientID}
		if h.cfg.ClientSecret != "" {
			cfg.PreregisteredClient.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: h.cfg.ClientSecret}
		}
	case reuse != nil:
		cfg.PreregisteredClient = reuse
	}
	if len(h.cfg.Scopes) > 0 {
		scopes := h.cfg.Scopes
		cfg.ScopeFilter = func([]string) []string { return scopes }
	}
	inner, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		return nil, fmt.Errorf("oauth: %w", err)
	}
	return inner, nil
}

// TokenSource returns the token source of the current login, nil before
// the first one.
// After a refused refresh it is nil too: requests then go out without a
// token (the session's closing DELETE among them) and a 401 comes back to
// Authorize, which answers with the refusal instead of a browser.
func (h *AuthCode) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	h.mu.Lock()
	src := h.source
	h.mu.Unlock()
	if src == nil || src.refusal() != nil {
		return nil, nil
	}
	return src, nil
}

// Authorize is called by the transport on a 401 or 403.
func (h *AuthCode) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	h.mu.Lock()
	src, inner, interactive, reused := h.source, h.inner, h.interactive, h.reused
	h.mu.Unlock()
	if src != nil && resp.StatusCode == http.StatusUnauthorized {
		// The server no longer takes the token: a refresh may fix that
		// without the user. Failing that, only a connection that began
		// with a login may log in again; one resumed from a stored login
		// waits for the user instead of opening a browser by itself.
		final := !interactive || h.logins.Load() >= maxLogins
		if err := src.rejected(final); err == nil {
			discard(resp)
			return nil
		} else if final || !errors.Is(err, ErrNeedsReauth) || src.refusal() != nil {
			discard(resp)
			return err
		}
	}
	if h.logins.Add(1) > maxLogins {
		discard(resp)
		return fmt.Errorf("%w: the server still refuses after %d logins", ErrNeedsReauth, maxLogins)
	}
	err := inner.Authorize(ctx, req, resp)
	if err != nil && reused && strings.Contains(err.Error(), "pre-registered credentials issuer") {
		// The server moved to another authorization server since the
		// stored client registered there: register anew at the new one.
		h.mu.Lock()
		h.reused = false
		inner, err = h.newInner(nil, nil)
		if err == nil {
			h.inner = inner
		}
		h.mu.Unlock()
		if err == nil {
			err = inner.Authorize(ctx, req, resp)
		}
	}
	if err != nil {
		return loginError(err)
	}
	return nil
}

// loginError keeps a failed login from being retried automatically: the
// browser opens again only when the user asks for it.
func loginError(err error) error {
	if errors.Is(err, ErrNeedsReauth) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrNeedsReauth, err)
}

// loggedIn is NewTokenSource: a login just completed with tok.
func (h *AuthCode) loggedIn(oc *oauth2.Config, tok *oauth2.Token) oauth2.TokenSource {
	src := h.newSource(oc, tok)
	h.mu.Lock()
	old := h.source
	h.source = src
	h.mu.Unlock()
	if old != nil {
		old.retire()
	}
	h.persist(oc, tok)
	h.refresher.watch(src)
	h.cfg.Logger.Info("logged in", "expires_at", tok.Expiry)
	return src
}

// noRedirectedPosts lets metadata lookups follow redirects but never a
// registration or token request, which would resend a code, a secret or a
// token to wherever the redirect points.
func noRedirectedPosts(req *http.Request, via []*http.Request) error {
	if via[0].Method != http.MethodGet || len(via) >= 10 {
		return http.ErrUseLastResponse
	}
	return nil
}

func (h *AuthCode) newSource(oc *oauth2.Config, tok *oauth2.Token) *tokenSource {
	// A refresh never follows a redirect: it would resend the refresh
	// token and the client secret to wherever the redirect points.
	client := &http.Client{Transport: h.capture, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, client)
	return &tokenSource{
		oc:  oc,
		ctx: ctx,
		tok: tok,
		saved: func(oc *oauth2.Config, tok *oauth2.Token) {
			h.persist(oc, tok)
		},
		refused: func(err error) {
			h.forgetToken()
			h.cfg.Logger.Warn("refresh refused: login required", "error", err)
			if h.cfg.OnRefused != nil {
				h.cfg.OnRefused(err)
			}
		},
	}
}

// persist stores the login after a login or a refresh.
func (h *AuthCode) persist(oc *oauth2.Config, tok *oauth2.Token) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	rec := &tokenstore.Record{
		ServerURL: h.cfg.URL,
		Token:     toStored(tok),
		Client: &tokenstore.Client{
			ClientID:     oc.ClientID,
			ClientSecret: oc.ClientSecret,
			RedirectURI:  h.redirect,
			AuthStyle:    int(oc.Endpoint.AuthStyle),
			Registered:   oc.ClientID != h.cfg.ClientID && oc.ClientID != h.cfg.ClientMetadataURL,
		},
		AuthServer: &tokenstore.AuthServer{
			AuthorizationEndpoint: oc.Endpoint.AuthURL,
			TokenEndpoint:         oc.Endpoint.TokenURL,
		},
	}
	if md, raw := h.capture.forTokenEndpoint(oc.Endpoint.TokenURL); md != nil {
		rec.AuthServer.Issuer, rec.AuthServer.Metadata = md.Issuer, raw
	} else if h.stored != nil && h.stored.AuthServer != nil && h.stored.AuthServer.TokenEndpoint == oc.Endpoint.TokenURL {
		rec.AuthServer.Issuer, rec.AuthServer.Metadata = h.stored.AuthServer.Issuer, h.stored.AuthServer.Metadata
	}
	if err := h.cfg.Store.Save(h.cfg.Server, rec); err != nil {
		h.cfg.Logger.Error("storing the login failed; the next start needs a login", "error", err)
		return
	}
	h.stored = rec
}

// forgetToken drops the stored token after a refused refresh, keeping the
// client and the authorization server for the next login.
func (h *AuthCode) forgetToken() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed || h.stored == nil {
		return
	}
	rec := *h.stored
	rec.Token = nil
	if err := h.cfg.Store.Save(h.cfg.Server, &rec); err != nil {
		h.cfg.Logger.Error("forgetting the refused token failed", "error", err)
		return
	}
	h.stored = &rec
}

// Close stops the background refresh. A refresh that completes after
// Close is not stored: the connection's owner may be deleting the server.
func (h *AuthCode) Close() {
	h.mu.Lock()
	h.closed = true
	src, ln := h.source, h.reserved
	h.reserved = nil
	h.mu.Unlock()
	if ln != nil {
		ln.Close()
	}
	if src != nil {
		src.retire()
	}
	h.refresher.stop()
}

func discard(resp *http.Response) {
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

// reserveRedirect binds a loopback port for the first login and keeps it
// bound until that login's callback takes it over. The port is stored with
// the registered client, so later logins listen on it again.
func reserveRedirect() (string, net.Listener, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("oauth: choosing a callback port: %w", err)
	}
	return fmt.Sprintf("http://127.0.0.1:%d/callback", l.Addr().(*net.TCPAddr).Port), l, nil
}
