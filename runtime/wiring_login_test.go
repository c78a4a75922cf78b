package runtime

import (
	"strings"
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/internal/testutil/oauthfake"
)

// A login whose code the authorization server refuses ends with
// login_failed, after its login_required: every login has an outcome.
func TestRefusedCodeEndsTheLoginWithLoginFailed(t *testing.T) {
	as := oauthfake.New(t)
	as.With(func(a *oauthfake.State) { a.RefuseCode = true })
	rt := start(t, Options{OpenURL: (&browser{}).open}, as.Config("web"))
	sub := rt.Subscribe(events.SubscribeOptions{Server: "web", From: 1, Buffer: 1 << 10})
	t.Cleanup(sub.Close)
	testutil.Await[events.LoginRequired](t, sub, 10*time.Second, "login required", nil)
	e := testutil.AwaitEvent(t, sub, 10*time.Second, "the login's outcome", func(e events.Event) bool {
		switch e.(type) {
		case events.LoginFailed, events.LoginCompleted:
			return true
		}
		return false
	})
	lf, ok := e.(events.LoginFailed)
	if !ok || !strings.Contains(lf.Error, "invalid_grant") {
		t.Errorf("the login ended with %s, want login_failed naming invalid_grant", e)
	}
	testutil.Await(t, sub, 10*time.Second, "needs_auth", func(e events.StateChanged) bool { return e.To == "needs_auth" })
}
