package server

import (
	"github.com/asynkron/protoactor-go/actor"

	"github.com/openprogram/mcpvisor/status"
)

// Recovery of a lost session (V1): the tools go at once, and a new session
// starts after an exponential backoff with jitter (actors.RestartPolicy).
// The backoff starts afresh after a session stayed ready for ResetAfter,
// and on any command from the manager (a manual restart).

// lose handles the loss of a session (or a failed attempt to replace it):
// its tools go at once and a new session starts after the backoff, unless
// the error is one a retry cannot fix.
func (a *Actor) lose(c actor.Context, err error, kind string) {
	// A login under way ends with the loss, not with the "login cancelled"
	// of the stopLogin that follows.
	a.loginFailed(err)
	if !retryable(kind) {
		a.fail(c, err, kind)
		return
	}
	a.withdraw()
	a.stopSession(c)
	a.spawnDue = false
	if !a.recovering && !a.readySince.IsZero() && a.deps.Since(a.readySince) >= a.deps.Restart.ResetAfter {
		a.backoff.Reset() // it had been stable: start again from the first delay
	}
	a.recovering = true
	delay := a.backoff.NextBackOff()
	next := a.deps.Now().Add(delay)
	a.st.Error, a.st.ErrorKind = err.Error(), kind
	a.st.NextRetryAt = &next
	a.setState(status.Backoff)
	a.cancelRetry()
	root, self, token := c.ActorSystem().Root, c.Self(), a.retryToken
	a.retryTimer = a.deps.AfterFunc(delay, func() { root.Send(self, retryNow{token: token}) })
	a.settle(c)
}

// endRecovery stops a pending retry and starts the backoff afresh.
func (a *Actor) endRecovery() {
	a.cancelRetry()
	a.recovering = false
	a.backoff.Reset()
	a.st.NextRetryAt = nil
}

// cancelRetry stops the backoff timer; a retryNow already sent carries an
// old token and is ignored.
func (a *Actor) cancelRetry() {
	if a.retryTimer != nil {
		a.retryTimer.Stop()
		a.retryTimer = nil
	}
	a.retryToken++
}

// retryable reports whether retrying can fix an error of this kind; the
// others wait for a management action.
func retryable(kind string) bool {
	return kind != status.KindCommandNotFound && kind != status.KindInvalidConfig && kind != status.KindNeedsReauth
}
