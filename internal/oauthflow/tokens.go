package oauthflow

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v5"
	"golang.org/x/oauth2"

	"github.com/openprogram/mcpvisor/internal/redact"
	"github.com/openprogram/mcpvisor/tokenstore"
)

// expiryDelta is how close to its expiry a token is refreshed on use,
// should the background refresh not have run (a suspended laptop).
const expiryDelta = 10 * time.Second

// tokenSource is the token of one login. The transport asks it for a
// token on every request, so a refreshed token is used at once. Refreshes
// go through golang.org/x/oauth2 at the token endpoint the login used
// (after a restart, the stored one).
//
// Two locks: fetching makes refreshes one at a time and is held across the
// network; mu guards the state and is never held across the network, so a
// request (or Close) never waits for a token endpoint. Order: fetching,
// then mu.
type tokenSource struct {
	oc     *oauth2.Config
	ctx    context.Context // carries the HTTP client; ends when retired
	cancel context.CancelFunc
	saved  func(*oauth2.Config, *oauth2.Token)
	// refreshed and refused say how a refresh of a source still in use
	// ended; each may be nil.
	refreshed func()
	refused   func(error)
	// scrub knows every token this source held and the client secret; it
	// scrubs refresh errors.
	scrub *redact.Scrubber

	fetching sync.Mutex

	mu         sync.Mutex
	tok        *oauth2.Token
	obtained   time.Time
	refusedErr error
	retired    bool
	changed    chan struct{} // closed when tok changes or the source retires
}

func (s *tokenSource) init() {
	if s.changed == nil {
		s.changed = make(chan struct{})
		if s.obtained.IsZero() {
			s.obtained = time.Now()
		}
	}
}

// current returns the token as it is, or the refusal.
func (s *tokenSource) current() (*oauth2.Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	if s.refusedErr != nil {
		return nil, s.refusedErr
	}
	return s.tok, nil
}

// Token returns the current token, refreshing it first if it is about to
// expire.
//
// A retired source (its connection is closing) no longer refreshes: the
// last requests (the session's DELETE) go out with the token as it is.
func (s *tokenSource) Token() (*oauth2.Token, error) {
	tok, err := s.current()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	retired := s.retired
	// Refresh on use only close to the expiry: the background refresher
	// normally got there first. A token that lives only seconds gets a
	// proportionally shorter margin, or every request would refresh it.
	margin := min(expiryDelta, tok.Expiry.Sub(s.obtained)/4)
	s.mu.Unlock()
	if retired || tok.Expiry.IsZero() || time.Until(tok.Expiry) > margin {
		return tok, nil
	}
	return s.refreshFrom(tok)
}

// refreshNow refreshes whatever the expiry says (the background
// refresher's time came). A refusal ends the login.
func (s *tokenSource) refreshNow() error {
	tok, err := s.current()
	if err != nil {
		return err
	}
	_, err = s.refreshFrom(tok)
	return err
}

// rejected is called when the server answered 401 to this source's token:
// a refresh may fix that without the user. If it cannot, the error matches
// ErrNeedsReauth: a refused refresh ends the login; without a refresh
// token the login ends only when final, and otherwise the caller may log
// in again (the user just did, in this connection).
func (s *tokenSource) rejected(final bool) error {
	tok, err := s.current()
	if err != nil {
		return err
	}
	if tok.RefreshToken == "" {
		err := fmt.Errorf("%w: the server rejected the token and there is no refresh token", ErrNeedsReauth)
		if final {
			s.mu.Lock()
			defer s.mu.Unlock()
			return s.refuseLocked(err)
		}
		return err
	}
	_, err = s.refreshFrom(tok)
	return err
}

// refreshFrom replaces seen with a refreshed token. If another refresh
// replaced it meanwhile, that one is the answer: concurrent requests cause
// one refresh, not one each.
func (s *tokenSource) refreshFrom(seen *oauth2.Token) (*oauth2.Token, error) {
	s.fetching.Lock()
	defer s.fetching.Unlock()
	s.mu.Lock()
	switch {
	case s.refusedErr != nil:
		defer s.mu.Unlock()
		return nil, s.refusedErr
	case s.tok != seen:
		defer s.mu.Unlock()
		return s.tok, nil
	case seen.RefreshToken == "":
		defer s.mu.Unlock()
		return nil, s.refuseLocked(fmt.Errorf("%w: the token expired and the server issued no refresh token", ErrNeedsReauth))
	}
	s.mu.Unlock()

	tok, err := s.fetch(seen.RefreshToken)

	s.mu.Lock()
	defer s.mu.Unlock()
	var refusal *refusedError
	switch {
	case errors.As(err, &refusal):
		return nil, s.refuseLocked(refusal.err)
	case err != nil:
		return nil, err
	}
	s.replaceLocked(tok)
	return tok, nil
}

// refusedError is a refresh the authorization server refused for good.
type refusedError struct{ err error }

func (e *refusedError) Error() string { return e.err.Error() }

// fetch asks the token endpoint for a new token, within refreshTimeout: a
// token endpoint that never answers must not hold the connection.
func (s *tokenSource) fetch(refreshToken string) (*oauth2.Token, error) {
	ctx, cancel := context.WithTimeout(s.ctx, refreshTimeout)
	defer cancel()
	tok, err := s.oc.TokenSource(ctx, &oauth2.Token{RefreshToken: refreshToken}).Token()
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && (re.ErrorCode == "invalid_grant" || re.ErrorCode == "unauthorized_client") {
			return nil, &refusedError{fmt.Errorf("%w: the authorization server refused the refresh (%s)", ErrNeedsReauth, re.ErrorCode)}
		}
		s.scrub.Learn(refreshToken, s.oc.ClientSecret)
		return nil, fmt.Errorf("oauth: refreshing the token: %w", safeError(err, s.scrub))
	}
	return tok, nil
}

func (s *tokenSource) replaceLocked(tok *oauth2.Token) {
	// The previous tokens stay known: a server may still echo one.
	s.scrub.Learn(tok.AccessToken, tok.RefreshToken)
	s.tok, s.obtained = tok, time.Now()
	close(s.changed)
	s.changed = make(chan struct{})
	if !s.retired {
		s.saved(s.oc, tok)
		if s.refreshed != nil {
			s.refreshed()
		}
	}
}

func (s *tokenSource) refuseLocked(err error) error {
	s.refusedErr = err
	close(s.changed)
	s.changed = make(chan struct{})
	if !s.retired && s.refused != nil {
		s.refused(err)
	}
	return err
}

// refusal is the error of a refused refresh, or nil.
func (s *tokenSource) refusal() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refusedErr
}

// retire stops this source from storing anything: a newer login replaced
// it, or its connection closed.
func (s *tokenSource) retire() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	if !s.retired {
		s.retired = true
		close(s.changed)
		s.changed = make(chan struct{})
	}
	if s.cancel != nil {
		s.cancel() // an in-flight refresh ends now
	}
}

// nextRefresh is when the background refresher should refresh, and the
// channel that says the answer changed. ok is false if there is nothing to
// refresh (no expiry, no refresh token, refused, retired).
func (s *tokenSource) nextRefresh() (at time.Time, changed <-chan struct{}, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	if s.retired || s.refusedErr != nil || s.tok.Expiry.IsZero() || s.tok.RefreshToken == "" {
		return time.Time{}, s.changed, false
	}
	// Refresh when a fifth of the lifetime is left (at least 5 s, at most
	// 5 min before expiry): early enough that a slow token endpoint or a
	// retry never lets a request go out with an expired token. Never in
	// the first half of the lifetime, though: a token that lives only
	// seconds must not make the refresher spin.
	life := s.tok.Expiry.Sub(s.obtained)
	lead := min(max(life/5, 5*time.Second), 5*time.Minute, life/2)
	return s.tok.Expiry.Add(-lead), s.changed, true
}

// refresher refreshes the current token of a connection before it
// expires, so that requests never wait for a refresh.
type refresher struct {
	goFn   func(func())
	logger *slog.Logger

	mu      sync.Mutex
	cur     *tokenSource
	started bool
	wake    chan struct{}
	done    chan struct{}
	stopped bool
}

func newRefresher(goFn func(func()), logger *slog.Logger) *refresher {
	return &refresher{goFn: goFn, logger: logger, wake: make(chan struct{}, 1), done: make(chan struct{})}
}

// watch makes src the source to keep fresh.
func (r *refresher) watch(src *tokenSource) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return
	}
	r.cur = src
	if !r.started {
		r.started = true
		r.goFn(r.loop)
	}
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

func (r *refresher) stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.stopped {
		r.stopped = true
		close(r.done)
	}
}

func (r *refresher) loop() {
	retry := backoff.NewExponentialBackOff()
	retry.InitialInterval, retry.MaxInterval = 2*time.Second, time.Minute
	for {
		r.mu.Lock()
		src := r.cur
		r.mu.Unlock()
		at, changed, ok := src.nextRefresh()
		var timer <-chan time.Time
		t := time.NewTimer(time.Until(at))
		if ok {
			timer = t.C
		}
		fired := false
		select {
		case <-r.done:
		case <-r.wake:
		case <-changed:
		case <-timer:
			fired = true
		}
		t.Stop()
		select {
		case <-r.done:
			return
		default:
		}
		if fired {
			if err := src.refreshNow(); err != nil && !errors.Is(err, ErrNeedsReauth) {
				wait := retry.NextBackOff()
				r.logger.Warn("token refresh failed; retrying", "error", err, "in", wait)
				select {
				case <-r.done:
					return
				case <-time.After(wait):
				}
			} else {
				retry.Reset()
			}
		}
	}
}

// safeError drops the response body oauth2 puts into its errors: it is the
// authorization server's text, and may echo what was sent. The error code
// and description stay, scrubbed.
func safeError(err error, scrub *redact.Scrubber) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		status := ""
		if re.Response != nil {
			status = re.Response.Status
		}
		if re.ErrorCode != "" {
			text := scrub.String(re.ErrorCode + " " + re.ErrorDescription)
			return fmt.Errorf("token endpoint answered %s: %s", status, text)
		}
		return fmt.Errorf("token endpoint answered %s", status)
	}
	return err
}

func toStored(t *oauth2.Token) *tokenstore.Token {
	st := &tokenstore.Token{
		AccessToken:  t.AccessToken,
		TokenType:    t.TokenType,
		RefreshToken: t.RefreshToken,
		ExpiresAt:    t.Expiry.UTC(),
	}
	if s, ok := t.Extra("scope").(string); ok && s != "" {
		st.Scopes = strings.Fields(s)
	}
	return st
}

func fromStored(t *tokenstore.Token) *oauth2.Token {
	return &oauth2.Token{
		AccessToken:  t.AccessToken,
		TokenType:    t.TokenType,
		RefreshToken: t.RefreshToken,
		Expiry:       t.ExpiresAt,
	}
}
