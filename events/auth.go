package events

import (
	"encoding/json"
	"time"
)

// Type names of the authorisation events.
const (
	TypeLoginRequired  = "login_required"
	TypeLoginCompleted = "login_completed"
	TypeLoginFailed    = "login_failed"
	TypeTokenRefreshed = "token_refreshed"
	TypeRefreshRefused = "refresh_refused"
)

// LoginRequired says a server waits for a user to log in in a browser.
type LoginRequired struct {
	Header
	// AuthorizeURL is the page to open. It carries the PKCE challenge and
	// state, which are meant for the browser, never a token or secret.
	AuthorizeURL string
}

// Type implements Event.
func (LoginRequired) Type() string { return TypeLoginRequired }

func (e LoginRequired) String() string { return e.prefix() + "login required at " + e.AuthorizeURL }

// MarshalJSON implements json.Marshaler.
func (e LoginRequired) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		wireHeader
		AuthorizeURL string `json:"authorize_url"`
	}{e.wire(TypeLoginRequired), e.AuthorizeURL})
}

func (e LoginRequired) stamp(seq uint64, t time.Time) Event { e.Seq, e.Time = seq, t; return e }

// LoginCompleted says a login ended with a token.
type LoginCompleted struct {
	Header
}

// Type implements Event.
func (LoginCompleted) Type() string { return TypeLoginCompleted }

func (e LoginCompleted) String() string { return e.prefix() + "login completed" }

// MarshalJSON implements json.Marshaler.
func (e LoginCompleted) MarshalJSON() ([]byte, error) {
	return json.Marshal(e.wire(TypeLoginCompleted))
}

func (e LoginCompleted) stamp(seq uint64, t time.Time) Event { e.Seq, e.Time = seq, t; return e }

// LoginFailed says a login ended without a token.
type LoginFailed struct {
	Header
	// Error says why, scrubbed of secrets.
	Error string
}

// Type implements Event.
func (LoginFailed) Type() string { return TypeLoginFailed }

func (e LoginFailed) String() string { return withError(e.prefix()+"login failed", e.Error) }

// MarshalJSON implements json.Marshaler.
func (e LoginFailed) MarshalJSON() ([]byte, error) {
	return marshalError(e.wire(TypeLoginFailed), e.Error)
}

func (e LoginFailed) stamp(seq uint64, t time.Time) Event { e.Seq, e.Time = seq, t; return e }

// TokenRefreshed says a server's access token was renewed in the
// background.
type TokenRefreshed struct {
	Header
}

// Type implements Event.
func (TokenRefreshed) Type() string { return TypeTokenRefreshed }

func (e TokenRefreshed) String() string { return e.prefix() + "token refreshed" }

// MarshalJSON implements json.Marshaler.
func (e TokenRefreshed) MarshalJSON() ([]byte, error) {
	return json.Marshal(e.wire(TypeTokenRefreshed))
}

func (e TokenRefreshed) stamp(seq uint64, t time.Time) Event { e.Seq, e.Time = seq, t; return e }

// RefreshRefused says the token endpoint refused a refresh; the server
// needs a new login.
type RefreshRefused struct {
	Header
	// Error says why, scrubbed of secrets.
	Error string
}

// Type implements Event.
func (RefreshRefused) Type() string { return TypeRefreshRefused }

func (e RefreshRefused) String() string { return withError(e.prefix()+"refresh refused", e.Error) }

// MarshalJSON implements json.Marshaler.
func (e RefreshRefused) MarshalJSON() ([]byte, error) {
	return marshalError(e.wire(TypeRefreshRefused), e.Error)
}

func (e RefreshRefused) stamp(seq uint64, t time.Time) Event { e.Seq, e.Time = seq, t; return e }

// marshalError is the JSON of an event whose only field is its error.
func marshalError(h wireHeader, err string) ([]byte, error) {
	return json.Marshal(struct {
		wireHeader
		Error string `json:"error"`
	}{h, err})
}
