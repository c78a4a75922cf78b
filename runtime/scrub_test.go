package runtime

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/internal/exampleserver"
	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/internal/testutil/oauthfake"
	"github.com/openprogram/mcpvisor/status"
)

// secretForm is one form of a planted secret, named so that a failure
// says which form leaked without printing it.
type secretForm struct {
	name, value string
}

// secretForms is every form of each secret a careless server may echo:
// raw, each line, JSON-escaped, percent-encoded, base64 and base64url with
// and without padding. (Written out here rather than taken from the
// scrubber, so that the test checks the scrubber against an independent
// list.)
func secretForms(secrets ...string) []secretForm {
	var out []secretForm
	for i, s := range secrets {
		units := []string{s}
		if strings.Contains(s, "\n") {
			units = append(units, strings.Split(s, "\n")...)
		}
		for j, u := range units {
			js, _ := json.Marshal(u)
			for k, f := range []string{u, strings.Trim(string(js), `"`), url.QueryEscape(u), url.PathEscape(u),
				base64.StdEncoding.EncodeToString([]byte(u)), base64.RawStdEncoding.EncodeToString([]byte(u)),
				base64.URLEncoding.EncodeToString([]byte(u)), base64.RawURLEncoding.EncodeToString([]byte(u))} {
				kind := []string{"raw", "JSON-escaped", "query-escaped", "path-escaped", "base64", "raw base64", "base64url", "raw base64url"}[k]
				out = append(out, secretForm{fmt.Sprintf("secret %d, part %d (0: whole, n: line n), %s", i, j, kind), f})
			}
		}
	}
	return out
}

// assertScrubbed fails if any form of any secret appears in the runtime's
// logs, status (stderr tails, errors), server entries, or in extra texts
// (errors a call returned).
func assertScrubbed(t *testing.T, rt *testRuntime, secrets []string, extra ...string) {
	t.Helper()
	st, _ := json.Marshal(rt.Status())
	entries, _ := json.Marshal(rt.Servers())
	texts := map[string]string{"logs": rt.logs.String(), "status": string(st), "entries": string(entries),
		"errors": strings.Join(extra, "\n")}
	for where, text := range texts {
		for _, f := range secretForms(secrets...) {
			if strings.Contains(text, f.value) {
				t.Errorf("%s shows %s", where, f.name)
			}
		}
	}
}

// leak calls the leak tool of server name and returns its error, which
// must be one and show that something was scrubbed.
func leak(t *testing.T, rt *testRuntime, name string, args map[string]any) string {
	t.Helper()
	res, err := rt.CallTool(context.Background(), name+"__"+exampleserver.LeakToolName, args)
	if err == nil {
		t.Fatalf("the leak tool answered (%d blocks), want an error", len(res.Content))
	}
	if !strings.Contains(err.Error(), "[redacted]") {
		t.Errorf("the leak error shows nothing scrubbed")
	}
	return err.Error()
}

// A local server echoing a multi-line env value and one full of characters
// that JSON and URLs escape, in every encoding, into a JSON-RPC error and
// its stderr; and one that dies printing the base64 of a multi-line value
// as its last stderr line. Neither reaches an error, the stderr tail, the
// status or the log in any form.
func TestScrubEnvEchoedByLocalServer(t *testing.T) {
	const (
		multi   = "multi-LINE-one-7f3a\nmulti-LINE-two-91bc"
		special = `spec"ial <LEAK> & back\slash+0d5e/?`
	)
	leaky := exampleServer("leaky", "-leak-tool")
	leaky.Env["MULTI"], leaky.Env["SPECIAL"] = multi, special
	crasher := config.Server{Name: "crasher", Type: config.TypeLocal, Enabled: true,
		Command: []string{"/bin/sh", "-c", `echo "$MULTI" >&2; printf %s "$MULTI" | base64 -w0 >&2; echo >&2; exit 1`},
		Env:     map[string]string{"MULTI": multi}}
	crasher.Env[testutil.MarkerEnv] = marker
	rt := start(t, Options{}, leaky, crasher)
	if st := rt.waitSettled(t, "leaky"); st.State != status.Ready {
		t.Fatalf("leaky = %+v", st)
	}
	errText := leak(t, rt, "leaky", map[string]any{"env": []string{"MULTI", "SPECIAL"}})
	// Two values, nine forms each, one "leak: " line per form.
	testutil.Eventually(t, 10*time.Second, "stderr lines of the leak", func() bool {
		st, _ := rt.board.Get("leaky")
		n := 0
		for _, l := range st.StderrTail {
			if strings.HasPrefix(l, "leak: ") {
				n++
			}
		}
		return n >= 18
	})
	var st status.Server
	testutil.Eventually(t, 10*time.Second, "crasher's last_error", func() bool { st, _ = rt.board.Get("crasher"); return st.LastError != "" })
	if !strings.Contains(st.LastError, "last stderr line: \"[redacted]\"") {
		t.Errorf("crasher's last_error does not show its last stderr line scrubbed")
	}
	assertScrubbed(t, rt, []string{multi, special}, errText)
}

// A remote server whose URL has userinfo gets it as Basic authentication;
// echoing that header must not reveal user:pass in base64 or the password,
// nor the header itself in any encoding (a server may base64 it again).
func TestScrubURLUserinfoEchoed(t *testing.T) {
	const user, pass = "alice", "pw-USERINFO-4c1d"
	getServer := func(*http.Request) *mcp.Server {
		return exampleserver.NewServer(exampleserver.Options{LeakTool: true, Stderr: io.Discard})
	}
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(getServer, nil))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	u.User = url.UserPassword(user, pass)
	rt := start(t, Options{}, config.Server{Name: "web", Type: config.TypeHTTP, URL: u.String(), Enabled: true})
	if st := rt.waitSettled(t, "web"); st.State != status.Ready {
		t.Fatalf("web = %+v", st)
	}
	errText := leak(t, rt, "web", map[string]any{"headers": []string{"Authorization"}})
	if !strings.Contains(errText, "Basic [redacted]") {
		t.Errorf("the server did not get (or the error does not show) the Basic header, scrubbed")
	}
	header := "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
	assertScrubbed(t, rt, []string{pass, user + ":" + pass, header}, errText)
}

// An oauth server echoing the bearer token it got, and every token it
// accepted before: the first token and the one refreshed in the background
// are both scrubbed, as is the refresh token.
func TestScrubOAuthTokensEchoedAfterRefresh(t *testing.T) {
	as := oauthfake.New(t)
	as.With(func(a *oauthfake.State) { a.Lifetime, a.LeakTool = 2*time.Second, true })
	dir := writeServers(t, t.TempDir(), as.Config("web"))
	rt := startIn(t, dir, Options{OpenURL: (&browser{}).open})
	rt.waitFor(t, "web", status.Ready)
	args := map[string]any{"headers": []string{"Authorization", "X-Seen-Tokens"}}
	var errs, seen []string
	// The refresh is counted when its request arrives; the new token is
	// in use a moment later: call until the server has seen it.
	testutil.Eventually(t, 10*time.Second, "a refreshed token in use", func() bool {
		errs = append(errs, leak(t, rt, "web", args))
		as.With(func(a *oauthfake.State) { seen = append(seen[:0], a.SeenTokens...) })
		return len(seen) >= 2
	})
	if _, _, _, n := as.Counts(); n < 1 {
		t.Fatalf("the second token came without a refresh (%d refresh grants)", n)
	}
	assertScrubbed(t, rt, seen, errs...)
	noLeaks(t, rt, errs...)
}

// A client_credentials server echoing its tokens: the first one and the
// one fetched when it expired are both scrubbed, and so is the secret.
func TestScrubClientCredentialsTokensEchoed(t *testing.T) {
	as := oauthfake.New(t)
	// x/oauth2 takes a token as expired 10 s before its expiry: this one
	// is reused for a second, then replaced.
	as.With(func(a *oauthfake.State) { a.Lifetime, a.LeakTool = 11*time.Second, true })
	srv := as.Config("svc")
	srv.Auth = &config.Auth{Kind: config.AuthClientCredentials, ClientID: oauthfake.ClientID, ClientSecret: oauthfake.SecretMarker,
		TokenEndpointAuthMethod: "client_secret_post"}
	rt := start(t, Options{}, srv)
	if st := rt.waitSettled(t, "svc"); st.State != status.Ready {
		t.Fatalf("svc = %+v", st)
	}
	args := map[string]any{"headers": []string{"Authorization", "X-Seen-Tokens"}}
	var errs []string
	var seen []string
	testutil.Eventually(t, 10*time.Second, "a second client credentials token", func() bool {
		errs = append(errs, leak(t, rt, "svc", args))
		as.With(func(a *oauthfake.State) { seen = append(seen[:0], a.SeenTokens...) })
		return len(seen) >= 2
	})
	assertScrubbed(t, rt, append(seen, oauthfake.SecretMarker), errs...)
	noLeaks(t, rt, errs...)
}

// A token restored from the store at dial is scrubbed like one obtained
// by a login.
func TestScrubStoredOAuthTokenEchoed(t *testing.T) {
	as := oauthfake.New(t)
	dir := loggedIn(t, as)
	stored := storedLogin(t, dir, "web").Token
	as.With(func(a *oauthfake.State) { a.LeakTool = true })
	rt := startIn(t, dir, Options{OpenURL: (&browser{stay: true}).open})
	rt.waitFor(t, "web", status.Ready)
	errText := leak(t, rt, "web", map[string]any{"headers": []string{"Authorization"}})
	assertScrubbed(t, rt, []string{stored.AccessToken, stored.RefreshToken}, errText)
	noLeaks(t, rt, errText)
}
