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

	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/redact"
	"github.com/openprogram/mcpvisor/tokenstore"
)

// ErrNeedsReauth: the stored login can no longer be used (the refresh was
// refused, or a login failed) and only the user can fix it by logging in
// again. Nothing retries it automatically, so no browser ever loops.
var ErrNeedsReauth = errors.New("login required")

// ErrPrivateOAuthHost: an OAuth endpoint (discovery, registration, token,
// refresh) resolved to a non-public address that is not the MCP server's
// own host. The dial guard that refuses it lives with the connection
// (internal/mcpconn); it is declared here so that a login error keeps it.
var ErrPrivateOAuthHost = errors.New("refused an OAuth endpoint on a private address")

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
	// Scopes, if set, replace the scopes discovered from the server for a
	// first login; a step-up adds what the server asks for.
	Scopes []string
	// Store keeps the login across restarts.
	Store tokenstore.Store
	// Life ends when the connection's owner stops (restart, disable,
	// delete, shutdown): nothing is stored after that.
	Life context.Context
	// UserAction is true when the user asked for this connection (an add,
	// edit or restart): only then may a server that needs a new login
	// (refused refresh, failed login) open the browser again.
	UserAction bool
	// Login opens the browser and waits for the redirect.
	Login Login
	// HTTPClient is used for discovery, registration and tokens. Default:
	// a client over http.DefaultTransport. Either way, only https and
	// loopback URLs are allowed.
	HTTPClient *http.Client
	// Logger receives the warnings of the login (a stored login that
	// cannot be used or stored, a refresh to retry); never a token.
	Logger *slog.Logger
	// Emit receives events.TokenRefreshed when a refresh renewed the
	// token and events.RefreshRefused when the authorization server
	// refused one, with Server in their Header and the error scrubbed.
	// It must not block. Nil: no events.
	Emit func(events.Event)
	// Go runs the background refresher; the owner waits for it.
	Go func(func())
	// OnRefused is called once when a refresh is refused: the connection
	// should end with the error, which matches ErrNeedsReauth.
	OnRefused func(error)
	// Scrubber learns every secret the login holds or obtains (client
	// secrets, codes, verifiers, access and refresh tokens, current and
	// previous) and scrubs the handler's errors with them. The connection
	// passes its own, so that its errors and logs lose them too. Default:
	// one of the handler's own.
	Scrubber *redact.Scrubber
}

// AuthCode is the OAuth handler of one connection of an oauth server: the
// SDK's AuthorizationCodeHandler with persistence, background refresh, and
// a rule for when a browser may open: a first login (nothing stored), a
// login the user asked for (a restart after needs_auth), and a step-up to
// more scopes; never to replace a refused refresh by itself.
type AuthCode struct {
	cfg         AuthCodeConfig
	key         string // fingerprint of the auth config the login is for
	redirect    string
	interactive bool // this connection may start a login
	capture     *metadataCapture
	refresher   *refresher

	// authorizing makes logins one at a time: two calls refused at once
	// cause one login, and the second retries with its token.
	authorizing sync.Mutex
	logins      atomic.Int32 // logins started by this connection
	loginSeq    atomic.Uint64

	mu       sync.Mutex
	reserved net.Listener // the first login's port, until that login takes it
	inner    *auth.AuthorizationCodeHandler
	reused   bool // inner offers the stored registered client
	source   *tokenSource
	stored   *tokenstore.Record
	stepUp   bool // the running Authorize answers a 403 insufficient_scope
	closed   bool
}

var _ auth.OAuthHandler = (*AuthCode)(nil)

// maxLogins bounds the logins of one connection: a server that keeps
// refusing fresh tokens must not keep opening the browser.
const maxLogins = 3

// NewAuthCode returns the handler for one connection. It reads the stored
// login; a stored token for the same URL and auth config is used without a
// browser.
func NewAuthCode(cfg AuthCodeConfig) (*AuthCode, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Go == nil {
		cfg.Go = func(f func()) { go f() }
	}
	if cfg.Emit == nil {
		cfg.Emit = func(events.Event) {}
	}
	if cfg.Life == nil {
		cfg.Life = context.Background()
	}
	if cfg.Scrubber == nil {
		cfg.Scrubber = redact.New()
	}
	h := &AuthCode{cfg: cfg, key: recordKey(cfg)}
	rec := h.load()
	h.stored = rec
	base := http.DefaultTransport
	if cfg.HTTPClient != nil && cfg.HTTPClient.Transport != nil {
		base = cfg.HTTPClient.Transport
	}
	h.capture = &metadataCapture{base: secureTransport{base: base}, scrub: cfg.Scrubber}
	cfg.Scrubber.Learn(cfg.ClientSecret)
	h.refresher = newRefresher(cfg.Go, cfg.Logger)

	var err error
	if rec != nil && rec.Client != nil && rec.Client.RedirectURI != "" {
		h.redirect = rec.Client.RedirectURI
	} else if h.redirect, h.reserved, err = reserveRedirect(); err != nil {
		return nil, err
	}
	var initial oauth2.TokenSource
	if rec != nil && rec.Token != nil && rec.Client != nil && rec.AuthServer != nil && rec.AuthServer.TokenEndpoint != "" {
		oc := &oauth2.Config{
			ClientID:     rec.Client.ClientID,
			ClientSecret: h.clientSecret(rec.Client),
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
	// A first login may open the browser by itself; a login after a
	// refusal or a failed login only when the user asked for it.
	h.interactive = initial == nil && (rec == nil || !rec.NeedsLogin || cfg.UserAction)
	reuse := h.storedClient()
	h.reused = reuse != nil
	if h.inner, err = h.newInner(initial, reuse); err != nil {
		h.Close()
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
		RedirectURL:              h.redirect,
		AuthorizationCodeFetcher: h.fetchCode,
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
		ScopeFilter:        h.scopes,
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
	inner, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		return nil, fmt.Errorf("oauth: %w", err)
	}
	return inner, nil
}

// scopes chooses the scopes of a login: the configured ones instead of the
// discovered ones for a first login; for a step-up, also what the server
// now asks for and what the stored token was granted (a resumed connection
// must not lose earlier grants).
func (h *AuthCode) scopes(discovered []string) []string {
	h.mu.Lock()
	stepUp, rec := h.stepUp, h.stored
	h.mu.Unlock()
	if len(h.cfg.Scopes) == 0 && !stepUp {
		return discovered
	}
	out := h.cfg.Scopes
	if len(out) == 0 || stepUp {
		out = unionScopes(out, discovered)
	}
	if stepUp && rec != nil && rec.Token != nil {
		out = unionScopes(out, rec.Token.Scopes)
	}
	return out
}

// fetchCode is the SDK's AuthorizationCodeFetcher: one browser login.
func (h *AuthCode) fetchCode(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
	if !h.interactive {
		return nil, fmt.Errorf("%w: restart the server to log in again", ErrNeedsReauth)
	}
	if h.logins.Add(1) > maxLogins {
		return nil, fmt.Errorf("%w: the server still refuses after %d logins", ErrNeedsReauth, maxLogins)
	}
	h.mu.Lock()
	ln := h.reserved
	h.reserved = nil
	h.mu.Unlock()
	res, err := h.cfg.Login(ctx, LoginRequest{URL: args.URL, RedirectURI: h.redirect, Listener: ln})
	if err == nil {
		h.capture.remember(res.Code)
	}
	return res, err
}

// TokenSource returns the token source of the current login, nil before
// the first one.
//
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
	if loginBarred(ctx) {
		discard(resp)
		return ErrLoginNotTried
	}
	seq := h.loginSeq.Load()
	h.authorizing.Lock()
	defer h.authorizing.Unlock()
	if h.loginSeq.Load() != seq {
		// Another request logged in while this one waited: retry with
		// that token before asking the user again.
		discard(resp)
		return nil
	}
	h.mu.Lock()
	src, inner, reused := h.source, h.inner, h.reused
	h.stepUp = resp.StatusCode == http.StatusForbidden
	h.mu.Unlock()
	if src != nil && resp.StatusCode == http.StatusUnauthorized {
		// The server no longer takes the token: a refresh may fix that
		// without the user. Failing that, only a connection that may log
		// in does; one resumed from a stored login waits for the user.
		final := !h.interactive || h.logins.Load() >= maxLogins
		if err := src.rejected(final); err == nil {
			discard(resp)
			return nil
		} else if final || !errors.Is(err, ErrNeedsReauth) || src.refusal() != nil {
			discard(resp)
			return h.clean(err)
		}
	}
	before := h.logins.Load()
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
	switch {
	case err == nil:
		return nil
	case h.logins.Load() == before && !errors.Is(err, ErrNeedsReauth):
		// Discovery or registration failed before any browser opened: a
		// retry may succeed (the authorization server was down).
		return h.clean(err)
	}
	if ctx.Err() == nil {
		// The login failed or timed out: the next start waits for the
		// user instead of opening the browser again by itself. (A login
		// abandoned by a stop is not recorded: Life has ended.)
		h.needsLogin()
	}
	return h.clean(loginError(err))
}

// loginError keeps a failed login from being retried automatically: the
// browser opens again only when the user asks for it.
func loginError(err error) error {
	if errors.Is(err, ErrNeedsReauth) || errors.Is(err, context.Canceled) {
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
	h.loginSeq.Add(1)
	h.persist(oc, tok)
	h.refresher.watch(src)
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
	client := &http.Client{Transport: h.capture, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), oauth2.HTTPClient, client))
	// A token restored from the store is as secret as one just obtained.
	h.cfg.Scrubber.Learn(oc.ClientSecret, tok.AccessToken, tok.RefreshToken)
	return &tokenSource{
		oc:     oc,
		ctx:    ctx,
		cancel: cancel,
		tok:    tok,
		scrub:  h.cfg.Scrubber,
		saved:  h.persist,
		refreshed: func() {
			h.cfg.Emit(events.TokenRefreshed{Header: events.Header{Server: h.cfg.Server}})
		},
		refused: func(err error) {
			h.forgetToken()
			h.cfg.Emit(events.RefreshRefused{Header: events.Header{Server: h.cfg.Server}, Error: h.cfg.Scrubber.ErrorString(err.Error())})
			if h.cfg.OnRefused != nil {
				h.cfg.OnRefused(err)
			}
		},
	}
}

// Close stops the background refresh and any refresh in flight; nothing is
// stored after Close. The owner calls it as soon as the connection is no
// longer wanted, before the server's stored login may be deleted.
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

// discard drains a little of a refused answer's body (so its connection
// may be reused) and closes it; a server's endless 401 is not read on.
func discard(resp *http.Response) {
	io.Copy(io.Discard, io.LimitReader(resp.Body, maxDrain))
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
