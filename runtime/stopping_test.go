package runtime

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/internal/testutil/oauthfake"
)

// A server removed while a failed listing waits for its retry leaves no
// timer behind: the retry would reach a same-named successor.
func TestRemovedServerLeavesNoRelistTimer(t *testing.T) {
	srv, failList, clock, rt := startFailingLister(t)
	sub := rt.Subscribe(events.SubscribeOptions{Server: "mem", From: rt.bus.LastSeq() + 1})
	t.Cleanup(sub.Close)

	failList.Store(true)
	mcp.AddTool(srv, &mcp.Tool{Name: "b"}, noopTool) // announces the change
	waitTimers(t, clock, 1)                          // the listing failed: its retry is due
	if err := rt.RemoveServer(t.Context(), "mem"); err != nil {
		t.Fatal(err)
	}
	testutil.Await[events.ServerRemoved](t, sub, 10*time.Second, "server removed", nil)
	noTimers(t, clock)
}

// A login still waiting at Shutdown ends with login_failed: every
// login_required has an outcome.
func TestShutdownEndsAWaitingLogin(t *testing.T) {
	as := oauthfake.New(t)
	rt := start(t, Options{OpenURL: (&browser{stay: true}).open}, as.Config("web"))
	sub := rt.Subscribe(events.SubscribeOptions{Server: "web", From: 1, Buffer: 1 << 10})
	t.Cleanup(sub.Close)
	testutil.Await[events.LoginRequired](t, sub, 10*time.Second, "login required", nil)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := rt.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	testutil.Await[events.LoginFailed](t, sub, 10*time.Second, "the login's outcome", nil)
}

// A session that dies during its login (its actor panics) ends the login
// with that loss, not with a cancellation or nothing.
func TestLossDuringALoginIsItsOutcome(t *testing.T) {
	as := oauthfake.New(t)
	rt := start(t, Options{Debug: true, OpenURL: (&browser{stay: true}).open}, as.Config("web"))
	sub := rt.Subscribe(events.SubscribeOptions{Server: "web", From: 1, Buffer: 1 << 10})
	t.Cleanup(sub.Close)
	testutil.Await[events.LoginRequired](t, sub, 10*time.Second, "login required", nil)
	if err := rt.InjectFailure(t.Context(), "manager/web/session", "panic"); err != nil {
		t.Fatal(err)
	}
	lf := testutil.Await[events.LoginFailed](t, sub, 10*time.Second, "the login's outcome", nil)
	if !strings.Contains(lf.Error, "stopped unexpectedly") {
		t.Errorf("the login ended with %q, want the session's loss", lf.Error)
	}
}
