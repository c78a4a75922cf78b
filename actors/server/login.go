package server

import (
	"fmt"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/openprogram/mcpvisor/actors/oauthcallback"
	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/oauthflow"
	"github.com/openprogram/mcpvisor/messages"
	"github.com/openprogram/mcpvisor/status"
)

// login is the oauthcallback child of a waiting login.
type login struct {
	pid   *actor.PID
	reply chan messages.LoginResult
	prev  status.State // the state to go back to when the login ends
}

// startLogin starts the callback actor for a session's login. A login of
// a session that is no longer current is refused at once; a second login
// replaces the first (whose waiter is cancelled).
func (a *Actor) startLogin(c actor.Context, msg messages.LoginNeeded) {
	if msg.Gen != a.gen || a.session == nil {
		msg.Refuse(oauthflow.ErrLoginCancelled)
		return
	}
	if a.login != nil || a.queuedLogin != nil {
		// The waiting login this one replaces ends here: each
		// LoginRequired gets one outcome.
		a.loginFailed(oauthflow.ErrLoginCancelled)
	}
	a.stopLogin(c)
	if a.loginDraining != nil {
		// The previous login's socket may still be open on the port this
		// one needs: start once it is gone.
		a.queuedLogin = &msg
		return
	}
	a.logins++
	req := oauthcallback.Request{
		URL:         msg.URL,
		RedirectURI: msg.RedirectURI,
		Reply:       msg.Reply,
		Listener:    msg.Listener,
		OpenURL:     a.deps.OpenURL,
		Timeout:     a.deps.LoginTimeout,
		Emit:        a.emitAny,
	}
	name := fmt.Sprintf("%s-%d", oauthcallback.Name, a.logins)
	pid, err := c.SpawnNamed(oauthcallback.Props(a.deps, a.logger, req), name)
	if err != nil {
		msg.Refuse(fmt.Errorf("starting the login: %w", err))
		return
	}
	a.login = &login{pid: pid, reply: msg.Reply, prev: a.st.State}
	a.loggedIn = true
	a.emit(events.LoginRequired{AuthorizeURL: msg.URL})
	a.setState(status.Authorizing)
	// A login takes as long as the user takes: whoever waits for this
	// connect (startup's next server, an edit) goes on now.
	a.settle(c)
}

// loginFailed ends the login of the current session, if it asked for one,
// with err: the server actor alone says how a login ended (LoginCompleted
// when the session it was for is ready, LoginFailed here), whether the
// callback, the token exchange or the session after it failed.
func (a *Actor) loginFailed(err error) {
	if a.loggedIn {
		a.loggedIn = false
		a.emit(events.LoginFailed{Error: err.Error()})
	}
}

// stopLogin stops the waiting login, if any: its socket closes and its
// waiter gets a cancellation error.
func (a *Actor) stopLogin(c actor.Context) {
	if q := a.queuedLogin; q != nil {
		a.queuedLogin = nil
		q.Refuse(oauthflow.ErrLoginCancelled)
	}
	if a.login == nil {
		return
	}
	c.Stop(a.login.pid)
	a.loginDraining = a.login.pid
	a.loginOver()
}

// loginTerminated handles the end of a callback actor.
func (a *Actor) loginTerminated(c actor.Context, who *actor.PID) bool {
	switch {
	case a.login != nil && who.Equal(a.login.pid):
		a.loginOver() // it finished by itself: success, error or timeout
	case a.loginDraining != nil && who.Equal(a.loginDraining):
		a.loginDraining = nil
		if q := a.queuedLogin; q != nil {
			a.queuedLogin = nil
			a.startLogin(c, *q)
		}
	default:
		return false
	}
	return true
}

// loginOver forgets the login; the state goes back to what it was unless
// something else changed it meanwhile.
func (a *Actor) loginOver() {
	l := a.login
	a.login = nil
	if a.st.State == status.Authorizing {
		a.setState(l.prev)
	}
}

// abandonLogin stops the login (waiting or queued) of a waiter that gave up.
func (a *Actor) abandonLogin(c actor.Context, reply chan messages.LoginResult) {
	if q := a.queuedLogin; q != nil && q.Reply == reply {
		a.queuedLogin = nil
		q.Refuse(oauthflow.ErrLoginCancelled)
		return
	}
	if a.login != nil && a.login.reply == reply {
		a.stopLogin(c)
	}
}
