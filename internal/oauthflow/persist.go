package oauthflow

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"golang.org/x/oauth2"

	"github.com/openprogram/mcpvisor/tokenstore"
)

// recordKey fingerprints the auth config a login is made for: a login
// stored under another client, secret or scope set (the user edited the
// server) is not used.
func recordKey(cfg AuthCodeConfig) string {
	sum := sha256.Sum256([]byte(strings.Join([]string{
		cfg.ClientID, cfg.ClientSecret, cfg.ClientMetadataURL, strings.Join(cfg.Scopes, " "),
	}, "\x00")))
	return hex.EncodeToString(sum[:16])
}

// load reads the stored login, if it is for this URL and auth config.
func (h *AuthCode) load() *tokenstore.Record {
	rec, err := h.cfg.Store.Load(h.cfg.Server)
	switch {
	case err != nil:
		h.cfg.Logger.Warn("ignoring the stored login", "error", err)
		return nil
	case rec == nil:
		return nil
	case rec.ServerURL != h.cfg.URL || rec.AuthKey != h.key:
		// Made for another URL or auth config: the next login replaces it.
		// A pending "needs login" still holds, so that an edit does not
		// open a browser by itself (the edit is a user action anyway).
		return &tokenstore.Record{ServerURL: h.cfg.URL, AuthKey: h.key, NeedsLogin: rec.NeedsLogin}
	}
	return rec
}

// clientSecret is the secret of a stored client: a registered client's
// own, or the configured one (which the store never holds).
func (h *AuthCode) clientSecret(c *tokenstore.Client) string {
	if c.Registered {
		return c.ClientSecret
	}
	return h.cfg.ClientSecret
}

// save stores rec unless the connection's owner stopped or Close ran: a
// server deleted meanwhile must not get its login back. The store's lock
// makes the check and the write one step against a delete.
func (h *AuthCode) save(rec *tokenstore.Record) bool {
	err := h.cfg.Store.SaveIf(h.cfg.Server, rec, func() bool { return !h.closed && h.cfg.Life.Err() == nil })
	switch {
	case err == tokenstore.ErrSkipped:
		return false
	case err != nil:
		h.cfg.Logger.Error("storing the login failed; the next start needs a login", "error", err)
		return false
	}
	h.stored = rec
	return true
}

// persist stores the login after a login or a refresh.
func (h *AuthCode) persist(oc *oauth2.Config, tok *oauth2.Token) {
	h.mu.Lock()
	defer h.mu.Unlock()
	registered := oc.ClientID != h.cfg.ClientID && oc.ClientID != h.cfg.ClientMetadataURL
	rec := &tokenstore.Record{
		ServerURL: h.cfg.URL,
		AuthKey:   h.key,
		Token:     toStored(tok),
		Client: &tokenstore.Client{
			ClientID:    oc.ClientID,
			RedirectURI: h.redirect,
			AuthStyle:   int(oc.Endpoint.AuthStyle),
			Registered:  registered,
		},
		AuthServer: &tokenstore.AuthServer{
			AuthorizationEndpoint: oc.Endpoint.AuthURL,
			TokenEndpoint:         oc.Endpoint.TokenURL,
		},
	}
	if registered {
		rec.Client.ClientSecret = oc.ClientSecret // the configured one stays in the config
	}
	if md, raw := h.capture.forTokenEndpoint(oc.Endpoint.TokenURL); md != nil {
		rec.AuthServer.Issuer, rec.AuthServer.Metadata = md.Issuer, raw
	} else if h.stored != nil && h.stored.AuthServer != nil && h.stored.AuthServer.TokenEndpoint == oc.Endpoint.TokenURL {
		rec.AuthServer.Issuer, rec.AuthServer.Metadata = h.stored.AuthServer.Issuer, h.stored.AuthServer.Metadata
	}
	if rec.Token.Scopes == nil && h.stored != nil && h.stored.Token != nil {
		rec.Token.Scopes = h.stored.Token.Scopes // a refresh keeps the grant
	}
	h.save(rec)
}

// forgetToken drops the stored token after a refused refresh, keeping the
// client and the authorization server for the next login, and records
// that only the user may start that login.
func (h *AuthCode) forgetToken() { h.markNeedsLogin(true) }

// needsLogin records that a login failed: the next connection waits for
// the user instead of opening the browser by itself.
func (h *AuthCode) needsLogin() { h.markNeedsLogin(false) }

func (h *AuthCode) markNeedsLogin(dropToken bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	rec := tokenstore.Record{ServerURL: h.cfg.URL, AuthKey: h.key}
	if h.stored != nil {
		rec = *h.stored
	}
	if rec.NeedsLogin && (rec.Token == nil || !dropToken) {
		return // recorded already
	}
	rec.NeedsLogin = true
	if dropToken {
		rec.Token = nil
	}
	h.save(&rec)
}
