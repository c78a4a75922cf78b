package messages

import "net"

// Login: an oauth server's connection needs the user to log in. The
// session's dial goroutine (or a call doing a step-up) asks its server
// actor, which starts the oauthcallback child that owns the loopback
// listener. The reply channel has room for exactly one LoginResult; the
// callback actor sends exactly one, also when it is stopped (then with a
// cancellation error), so the waiter never hangs and never gets a code the
// browser did not deliver.

// LoginNeeded asks the server actor for an interactive login.
type LoginNeeded struct {
	Gen         uint64 // the asking session's generation
	URL         string // the authorization URL to open
	RedirectURI string // the loopback redirect the URL names
	// Listener, if set, is bound to the redirect's port already; whoever
	// ends up not using it (a refused or cancelled login) closes it.
	Listener net.Listener
	Reply    chan LoginResult
}

// Refuse answers the login with err without starting it.
func (m LoginNeeded) Refuse(err error) {
	if m.Listener != nil {
		m.Listener.Close()
	}
	m.Reply <- LoginResult{Err: err}
}

// LoginResult is the authorization server's redirect, or why there is none.
type LoginResult struct {
	Code, State, Iss string
	Err              error
}

// LoginAbandoned tells the server actor that the waiter of Reply gave up
// (its context ended): the callback actor of that login stops.
type LoginAbandoned struct {
	Reply chan LoginResult
}
