package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/internal/testutil/oauthfake"
	"github.com/openprogram/mcpvisor/status"
	"github.com/openprogram/mcpvisor/tokenstore"
)

func storedLogin(t *testing.T, dir, name string) *tokenstore.Record {
	t.Helper()
	rec, err := tokenstore.Store{Dir: func() (string, error) { return dir, nil }}.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// noLeaks fails if a planted OAuth secret appears in the runtime's logs,
// status, server entries or the HTTP API's answers.
func noLeaks(t *testing.T, rt *testRuntime, extra ...string) {
	t.Helper()
	entries, _ := json.Marshal(rt.Servers())
	st, _ := json.Marshal(rt.Status())
	api := newAPI(t, rt)
	texts := map[string]string{
		"logs": rt.logs.String(), "entries": string(entries), "status": string(st),
		"GET servers": string(api.do("GET", "/api/mcp/servers", "").body),
		"GET tree":    string(api.do("GET", "/debug/actors", "").body),
	}
	for _, e := range extra {
		texts["error"] += e + "\n"
	}
	for where, text := range texts {
		for _, m := range []string{oauthfake.AccessMarker, oauthfake.RefreshMarker, oauthfake.SecretMarker, oauthfake.CodeMarker} {
			if strings.Contains(text, m) {
				t.Errorf("%s shows a planted OAuth secret (%s)", where, m)
			}
		}
	}
}

// A first login goes through the callback actor's socket and is stored
// 0600 with an absolute expiry; a restarted runtime reconnects with it and
// opens no browser; a forged redirect on the way is refused.
func TestOAuthFirstLoginStoredAndReused(t *testing.T) {
	as := oauthfake.New(t)
	b := &browser{}
	var forged int
	b.before = func(callback *url.URL) {
		// A page in another tab hits the callback with a made-up state:
		// refused, and the real login goes on.
		bad := *callback
		bad.RawQuery = url.Values{"code": {"evil"}, "state": {"forged"}}.Encode()
		resp, err := http.Get(bad.String())
		if err == nil {
			forged = resp.StatusCode
			resp.Body.Close()
		}
	}
	dir := t.TempDir()
	rt := startIn(t, writeServers(t, dir, as.Config("web")), Options{OpenURL: b.open})
	if st := rt.waitFor(t, "web", status.Ready, status.NeedsAuth, status.Failed); st.State != status.Ready {
		t.Fatalf("web = %+v", st)
	}
	if forged != http.StatusBadRequest {
		t.Errorf("forged redirect answered %d, want 400", forged)
	}
	if res := mustCall(t, rt, "web__echo", map[string]any{"text": "hi"}); res.Content[0].Text != "hi" {
		t.Fatalf("echo = %+v", res)
	}
	if b.opens() != 1 {
		t.Fatalf("browser opened %d times, want 1", b.opens())
	}
	// The authorization URL carried a loopback redirect, PKCE and state.
	au, _ := url.Parse(b.last())
	redirect, _ := url.Parse(au.Query().Get("redirect_uri"))
	if redirect.Hostname() != "127.0.0.1" || au.Query().Get("code_challenge") == "" || au.Query().Get("state") == "" {
		t.Errorf("authorization URL %s", b.last())
	}

	path := filepath.Join(dir, "oauth", "web.json")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("stored login mode %v, want 0600", fi.Mode().Perm())
	}
	rec := storedLogin(t, dir, "web")
	if rec.Token == nil || !strings.HasPrefix(rec.Token.AccessToken, oauthfake.AccessMarker) || rec.Token.RefreshToken == "" {
		t.Fatalf("stored token %+v", rec.Token != nil)
	}
	if d := time.Until(rec.Token.ExpiresAt); d < 50*time.Minute || d > time.Hour {
		t.Errorf("expires_at %v is not an absolute time about an hour ahead", rec.Token.ExpiresAt)
	}
	if rec.Client == nil || rec.Client.ClientID != oauthfake.ClientID || rec.Client.RedirectURI != redirect.String() {
		t.Errorf("stored client %+v, want client-1 with redirect %s", rec.Client, redirect)
	}
	if rec.AuthServer == nil || rec.AuthServer.TokenEndpoint != as.URL+"/token" || rec.AuthServer.Issuer != as.URL {
		t.Errorf("stored authorization server %+v", rec.AuthServer)
	}
	noLeaks(t, rt)
	if err := rt.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}

	// A new runtime on the same state dir: no browser, no registration.
	quiet := &browser{stay: true}
	rt2 := startIn(t, dir, Options{OpenURL: quiet.open})
	if st := rt2.waitFor(t, "web", status.Ready, status.Authorizing, status.NeedsAuth, status.Failed); st.State != status.Ready {
		t.Fatalf("after restart web = %+v", st)
	}
	mustCall(t, rt2, "web__echo", map[string]any{"text": "again"})
	if quiet.opens() != 0 {
		t.Errorf("restart opened the browser")
	}
	if _, regs, codes, _ := as.Counts(); regs != 1 || codes != 1 {
		t.Errorf("registrations=%d code grants=%d, want 1 and 1", regs, codes)
	}
	noLeaks(t, rt2)
}

// writeServers writes a config and returns dir.
func writeServers(t *testing.T, dir string, servers ...config.Server) string {
	t.Helper()
	if err := (config.Store{Dir: func() (string, error) { return dir, nil }}).Save(&config.File{Servers: servers}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// loggedIn runs a first login and stops that runtime, leaving the login
// stored in the returned dir.
func loggedIn(t *testing.T, as *oauthfake.Server) string {
	t.Helper()
	dir := writeServers(t, t.TempDir(), as.Config("web"))
	rt := startIn(t, dir, Options{OpenURL: (&browser{}).open})
	if st := rt.waitFor(t, "web", status.Ready, status.NeedsAuth, status.Failed); st.State != status.Ready {
		t.Fatalf("first login: %+v", st)
	}
	if err := rt.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	return dir
}

// A stored token that expired is refreshed at the stored token endpoint
// at start, without discovery and without a browser.
func TestOAuthColdStartRefreshAtStoredEndpoint(t *testing.T) {
	as := oauthfake.New(t)
	dir := loggedIn(t, as)
	store := tokenstore.Store{Dir: func() (string, error) { return dir, nil }}
	rec := storedLogin(t, dir, "web")
	old := rec.Token.AccessToken
	rec.Token.ExpiresAt = time.Now().Add(-time.Minute)
	if err := store.Save("web", rec); err != nil {
		t.Fatal(err)
	}
	as.With(func(a *oauthfake.State) { a.MetadataDown = true; a.MetadataGets = 0 })

	b := &browser{stay: true}
	rt := startIn(t, dir, Options{OpenURL: b.open})
	if st := rt.waitFor(t, "web", status.Ready, status.Authorizing, status.NeedsAuth, status.Failed); st.State != status.Ready {
		t.Fatalf("web = %+v", st)
	}
	if _, _, _, refreshes := as.Counts(); refreshes != 1 {
		t.Errorf("refresh grants = %d, want 1", refreshes)
	}
	as.With(func(a *oauthfake.State) {
		if a.MetadataGets != 0 {
			t.Errorf("the cold-start refresh fetched metadata %d times; want the stored endpoint", a.MetadataGets)
		}
	})
	if b.opens() != 0 {
		t.Error("a refresh opened the browser")
	}
	if rec := storedLogin(t, dir, "web"); rec.Token.AccessToken == old || time.Until(rec.Token.ExpiresAt) < 50*time.Minute {
		t.Error("the refreshed token was not stored")
	}
	noLeaks(t, rt)
}

// Tokens are refreshed in the background before they expire, stored, and
// used by the live connection at once: the server accepts only unexpired
// tokens, so a stale one would fail the call.
func TestOAuthBackgroundRefreshUsedAtOnce(t *testing.T) {
	as := oauthfake.New(t)
	as.With(func(a *oauthfake.State) { a.Lifetime = 2 * time.Second })
	dir := writeServers(t, t.TempDir(), as.Config("web"))
	rt := startIn(t, dir, Options{OpenURL: (&browser{}).open})
	rt.waitFor(t, "web", status.Ready)
	first := storedLogin(t, dir, "web").Token.AccessToken
	// From the history: a refresh before this line is not missed.
	sub := rt.bus.Subscribe(events.SubscribeOptions{Server: "web", From: 1})
	defer sub.Close()
	testutil.Await[events.TokenRefreshed](t, sub, 20*time.Second, "a background refresh of a 2s token", nil)
	if _, _, _, n := as.Counts(); n < 1 {
		t.Fatalf("a refresh was announced but the authorization server counted %d", n)
	}
	mustCall(t, rt, "web__echo", map[string]any{"text": "fresh"})
	var used string
	as.With(func(a *oauthfake.State) { used = a.LastToken })
	stored := storedLogin(t, dir, "web").Token.AccessToken
	if used == first || stored == first {
		t.Errorf("the connection or the store still has the first token")
	}
	if st := mustStatus(t, rt, "web"); st.State != status.Ready || st.Restarts != 0 {
		t.Errorf("refresh disturbed the server: %+v", st)
	}
	noLeaks(t, rt)
}

// A refused refresh marks the server needs_reauth and waits: no browser,
// no retry. A restart by the user logs in again on the same redirect port
// with the stored client.
func TestOAuthRefusedRefreshNeedsReauthWithoutBrowserLoop(t *testing.T) {
	as := oauthfake.New(t)
	dir := loggedIn(t, as)
	port := func(raw string) string {
		u, _ := url.Parse(raw)
		r, _ := url.Parse(u.Query().Get("redirect_uri"))
		return r.Port()
	}
	firstRedirect := storedLogin(t, dir, "web").Client.RedirectURI

	b := &browser{}
	opts := Options{OpenURL: b.open}
	clock := fakeClock(&opts)
	rt := startIn(t, dir, opts)
	rt.waitFor(t, "web", status.Ready)
	as.With(func(a *oauthfake.State) { a.RefuseRefresh = true })
	as.RevokeAccess()

	_, err := rt.CallTool(context.Background(), "web__echo", map[string]any{"text": "x"})
	if err == nil {
		t.Fatal("call with a revoked token succeeded")
	}
	st := rt.waitFor(t, "web", status.NeedsAuth)
	if st.ErrorKind != status.KindNeedsReauth || st.NextRetryAt != nil {
		t.Errorf("status %+v, want needs_reauth and no retry", st)
	}
	rt.settle(t, "manager/web")
	noTimers(t, clock) // nothing may retry
	clock.Advance(time.Hour)
	rt.settle(t, "manager/web")
	if st := mustStatus(t, rt, "web"); st.State != status.NeedsAuth || b.opens() != 0 {
		t.Fatalf("after a refused refresh: state %s, browser opened %d times", st.State, b.opens())
	}
	if len(rt.Tools()) != 0 {
		t.Error("tools stay registered while the server needs a login")
	}
	if rec := storedLogin(t, dir, "web"); rec.Token != nil || rec.Client == nil {
		t.Errorf("after the refusal the record should keep the client and drop the token: %v", rec)
	}

	// The user restarts it: one login, same port, no new registration.
	as.With(func(a *oauthfake.State) { a.RefuseRefresh = false })
	if _, err := rt.RestartServer(context.Background(), "web"); err != nil {
		t.Fatalf("restart: %v", err)
	}
	rt.waitFor(t, "web", status.Ready)
	if b.opens() != 1 {
		t.Errorf("restart opened the browser %d times, want 1", b.opens())
	}
	if got, want := port(b.last()), port("x?redirect_uri="+url.QueryEscape(firstRedirect)); got != want {
		t.Errorf("login used port %s, the registered redirect has %s", got, want)
	}
	if _, regs, _, _ := as.Counts(); regs != 1 {
		t.Errorf("registrations = %d, want 1 (the stored client is reused)", regs)
	}
	noLeaks(t, rt, err.Error())
}

// After a refused refresh, a new runtime on the same state dir waits for
// the user too: no browser opens by itself at start.
func TestOAuthNeedsLoginSurvivesRestart(t *testing.T) {
	as := oauthfake.New(t)
	dir := loggedIn(t, as)
	rt := startIn(t, dir, Options{OpenURL: (&browser{}).open})
	rt.waitFor(t, "web", status.Ready)
	as.With(func(a *oauthfake.State) { a.RefuseRefresh = true })
	as.RevokeAccess()
	rt.CallTool(context.Background(), "web__echo", map[string]any{"text": "x"})
	rt.waitFor(t, "web", status.NeedsAuth)
	if err := rt.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}

	b := &browser{}
	rt2 := startIn(t, dir, Options{OpenURL: b.open})
	st := rt2.waitFor(t, "web", status.NeedsAuth, status.Ready, status.Authorizing)
	if st.State != status.NeedsAuth || st.ErrorKind != status.KindNeedsReauth || b.opens() != 0 {
		t.Fatalf("after a runtime restart: %+v, browser opened %d times; want needs_auth and no browser", st, b.opens())
	}
	if _, err := rt2.RestartServer(context.Background(), "web"); err != nil {
		t.Fatal(err)
	}
	rt2.waitFor(t, "web", status.Ready)
	if b.opens() != 1 {
		t.Errorf("the user's restart opened the browser %d times, want 1", b.opens())
	}
}

// A login that waits for the user does not hold up startup: the next
// server in the file connects meanwhile.
func TestOAuthLoginDoesNotBlockStartup(t *testing.T) {
	as := oauthfake.New(t)
	b := &browser{stay: true}
	web := as.Config("web")
	web.TimeoutSeconds = 1
	opts := Options{OpenURL: b.open}
	clock := fakeClock(&opts)
	rt := start(t, opts, web, exampleServer("other"))
	rt.waitFor(t, "web", status.Authorizing)
	if st := rt.waitFor(t, "other", status.Ready, status.Failed); st.State != status.Ready {
		t.Fatalf("other = %+v", st)
	}
	waitTimers(t, clock, 1) // the login's own timeout
	if pending(clock, 2) {
		t.Fatal("web's dial deadline runs while its login waits")
	}
	clock.Advance(1500 * time.Millisecond) // past web's timeout_seconds: the login still waits
	rt.settle(t, "manager/web")
	if st := mustStatus(t, rt, "web"); st.State != status.Authorizing {
		t.Errorf("a login was cut by the connect timeout: %+v", st)
	}
}

// An authorization server that quotes the code, the verifier and the
// client secret in its error page: none of them reaches status or logs.
func TestOAuthExchangeErrorIsScrubbed(t *testing.T) {
	as := oauthfake.New(t)
	as.With(func(a *oauthfake.State) { a.EchoExchange = true })
	rt := start(t, Options{OpenURL: (&browser{}).open}, as.Config("web"))
	st := rt.waitFor(t, "web", status.NeedsAuth, status.Failed, status.Backoff)
	if st.State != status.NeedsAuth || !strings.Contains(st.Error, "token exchange failed") {
		t.Errorf("status %+v: want needs_auth naming the failed exchange", st)
	}
	noLeaks(t, rt)
}

// Acceptance row "own OAuth callback cancelled / succeeds": a login that
// waits shows authorizing with its URL; disabling the server stops the
// callback actor, which closes its socket and releases the waiter (the
// dial ends: no goroutine is left, goleak checks); a login nobody answers
// times out into needs_auth and is not retried.
func TestAcceptance_OAuthCallbackCancelled(t *testing.T) {
	as := oauthfake.New(t)
	b := &browser{stay: true}
	dir := writeServers(t, t.TempDir(), as.Config("web"))
	rt := startIn(t, dir, Options{OpenURL: b.open})
	st := rt.waitFor(t, "web", status.Authorizing)
	b.awaitOpens(t, 1) // the browser opens just after the state shows
	if st.AuthorizeURL == "" || st.AuthorizeURL != b.last() {
		t.Fatalf("authorizing status %+v does not show the URL the browser got", st)
	}
	au, _ := url.Parse(st.AuthorizeURL)
	redirect, _ := url.Parse(au.Query().Get("redirect_uri"))
	conn, err := net.Dial("tcp", redirect.Host)
	if err != nil {
		t.Fatalf("nothing listens on the callback %s while the login waits: %v", redirect.Host, err)
	}
	conn.Close()
	if tree, err := rt.ActorTree(context.Background()); err != nil || !strings.Contains(mustJSON(t, tree), `"kind":"oauthcallback"`) {
		t.Errorf("the callback actor is not in the tree: %v", err)
	}

	if _, err := rt.PatchServer(context.Background(), "web", []byte(`{"enabled": false}`)); err != nil {
		t.Fatalf("disable: %v", err)
	}
	rt.waitFor(t, "web", status.Disabled)
	waitClosed(t, redirect.Host)
	if st := mustStatus(t, rt, "web"); st.AuthorizeURL != "" {
		t.Errorf("disabled server still shows authorize_url")
	}

	// Enabled again with a short login timeout nobody answers.
	if err := rt.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	opts := Options{OpenURL: b.open, LoginTimeout: 300 * time.Millisecond}
	clock := fakeClock(&opts)
	rt2 := startIn(t, writeServers(t, t.TempDir(), as.Config("web")), opts)
	// Each login the dial asks for times out once the clock passes its
	// timeout; the server ends in needs_auth.
	sub := rt2.Subscribe(events.SubscribeOptions{Server: "web", From: 1})
	defer sub.Close()
	for logins := 0; ; logins++ {
		e := testutil.AwaitEvent(t, sub, 30*time.Second, "a login or needs_auth", func(e events.Event) bool {
			switch e := e.(type) {
			case events.LoginRequired:
				return true
			case events.StateChanged:
				return e.To == string(status.NeedsAuth)
			}
			return false
		})
		if _, ok := e.(events.LoginRequired); !ok {
			break
		}
		if logins == 3 {
			t.Fatal("a login nobody answers was asked for again and again")
		}
		waitTimers(t, clock, 1) // the login's timeout
		clock.Advance(opts.LoginTimeout)
	}
	st, _ = rt2.board.Get("web")
	if st.ErrorKind != status.KindNeedsReauth || !strings.Contains(st.Error, "cancelled") {
		t.Errorf("timed-out login: %+v", st)
	}
	opens := b.opens()
	rt2.settle(t, "manager/web")
	noTimers(t, clock) // nothing may retry
	clock.Advance(time.Hour)
	rt2.settle(t, "manager/web")
	if b.opens() != opens || mustStatus(t, rt2, "web").State != status.NeedsAuth {
		t.Error("a timed-out login was retried by itself")
	}
}

func waitClosed(t *testing.T, addr string) {
	t.Helper()
	testutil.Eventually(t, 5*time.Second, "the callback socket "+addr+" to close", func() bool {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			return true
		}
		conn.Close()
		return false
	})
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// Deleting a server deletes its stored login.
func TestOAuthDeleteForgetsLogin(t *testing.T) {
	as := oauthfake.New(t)
	dir := loggedIn(t, as)
	rt := startIn(t, dir, Options{OpenURL: (&browser{stay: true}).open})
	rt.waitFor(t, "web", status.Ready)
	if err := rt.RemoveServer(context.Background(), "web"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "oauth", "web.json")); !os.IsNotExist(err) {
		t.Errorf("stored login still there after delete: %v", err)
	}
}

// The same acceptance row over the HTTP API: an oauth server added by POST
// shows authorizing with its URL; a PATCH that disables it closes the
// callback socket; a restart starts a new login that succeeds through the
// callback, and the entry shows ready with tools, its secrets masked.
func TestAcceptanceHTTP_OAuthCallbackCancelledAndSucceeds(t *testing.T) {
	as := oauthfake.New(t)
	b := &browser{stay: true}
	rt := start(t, Options{OpenURL: b.open})
	api := newAPI(t, rt)
	body := fmt.Sprintf(`{"name": "web", "type": "http", "url": %q, "auth": {"kind": "oauth"}}`, as.URL+"/mcp")
	api.do("POST", "/api/mcp/servers", body).want(t, http.StatusCreated)
	d := api.waitState("web", status.Authorizing)
	if d.AuthorizeURL == "" || d.Auth.Kind != "oauth" {
		t.Fatalf("authorizing entry %+v", d.ServerEntry)
	}
	au, _ := url.Parse(d.AuthorizeURL)
	redirect, _ := url.Parse(au.Query().Get("redirect_uri"))
	api.do("PATCH", "/api/mcp/servers/web", `{"enabled": false}`).want(t, http.StatusOK)
	api.waitState("web", status.Disabled)
	waitClosed(t, redirect.Host)

	// The user comes back: enable, and this time the browser answers.
	b.mu.Lock()
	b.stay = false
	b.mu.Unlock()
	api.do("PATCH", "/api/mcp/servers/web", `{"enabled": true}`).want(t, http.StatusOK)
	d = api.waitState("web", status.Ready)
	if d.ToolCount == 0 || d.AuthorizeURL != "" {
		t.Errorf("after the login: %+v", d.ServerEntry)
	}
	noLeaks(t, rt)
}
