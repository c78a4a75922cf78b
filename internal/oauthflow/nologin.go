package oauthflow

import (
	"context"
	"errors"
)

// ErrLoginNotTried is Authorize's answer to a request marked WithoutLogin
// that the server refused (401 or 403): no login was started or waited
// for. The server answered, so a keepalive probe that gets it counts the
// server alive (it needs a login, which a call will start).
var ErrLoginNotTried = errors.New("authorization needed; a background request starts no login")

// noLoginKey marks a request context: see WithoutLogin.
type noLoginKey struct{}

// WithoutLogin marks ctx as that of a background request (a keepalive
// probe): on a 401 or 403 Authorize neither opens a login, nor refreshes,
// nor fetches a client-credentials token, nor waits behind a login another
// request runs; it fails at once with ErrLoginNotTried. A probe must not set off a browser, and one queued
// behind a step-up login would be judged timed out just as the user
// finished.
func WithoutLogin(ctx context.Context) context.Context {
	return context.WithValue(ctx, noLoginKey{}, true)
}

// loginBarred reports whether ctx was marked WithoutLogin.
func loginBarred(ctx context.Context) bool { return ctx.Value(noLoginKey{}) != nil }
