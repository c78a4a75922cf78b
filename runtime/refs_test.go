package runtime

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/exampleserver"
	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/status"
)

// refSecret is a planted secret that reaches the server only through a
// ${REF_TOKEN} reference: it is in no config, only in the lookup.
const refSecret = "REF-SECRET-planted-3e9d7c"

// refLookup is the fake environment of the reference tests.
func refLookup(extra map[string]string) func(string) (string, bool) {
	env := map[string]string{"REF_TOKEN": refSecret, "REF_BIN": demoBin}
	for k, v := range extra {
		env[k] = v
	}
	return func(k string) (string, bool) { v, ok := env[k]; return v, ok }
}

// eventsJSON is every event sub holds now, as JSON lines.
func eventsJSON(sub *events.Subscription) string {
	var b strings.Builder
	for _, e := range drain(sub) {
		js, _ := json.Marshal(e)
		b.Write(js)
		b.WriteByte('\n')
	}
	return b.String()
}

// The references of command, env and cwd are expanded for the process at
// connect, from Options.LookupEnv; the file, GET and a PATCH keep them;
// the expanded secret is scrubbed from the leak tool's error, its stderr,
// status, logs and events.
func TestReferencesExpandedAtConnect(t *testing.T) {
	dir := t.TempDir()
	srv := config.Server{Name: "ex", Type: config.TypeLocal, Enabled: true,
		Command: []string{"${REF_BIN}", "serve", "-leak-tool"},
		Cwd:     "${REF_DIR}",
		Env: map[string]string{
			testutil.MarkerEnv: marker,
			"TOKEN":            "${REF_TOKEN}",
			"MIX":              "pre-${env:REF_TOKEN}",
			"LIT":              "pa$$w0rd",
			"ESC":              "$${REF_TOKEN}",
			"DEF":              "${REF_UNSET:-fallback}",
		}}
	stateDir := t.TempDir()
	testutil.WriteConfig(t, stateDir, srv)
	rt := startIn(t, stateDir, Options{LookupEnv: refLookup(map[string]string{"REF_DIR": dir})})
	// From the history's start, so that every event of the test is
	// checked, the first connect's included (server logs live only).
	all := rt.Subscribe(events.SubscribeOptions{From: 1, Buffer: 1 << 14})
	t.Cleanup(all.Close)
	if st := rt.waitSettled(t, "ex"); st.State != status.Ready {
		t.Fatalf("ex = %+v", st)
	}
	for name, want := range map[string]string{"TOKEN": refSecret, "MIX": "pre-" + refSecret, "LIT": "pa$$w0rd", "ESC": "${REF_TOKEN}", "DEF": "fallback", "PWD": dir} {
		// The env tool's result is the server's answer, not scrubbed.
		if got := mustCall(t, rt, "ex__env", map[string]any{"name": name}).Content[0].Text; got != want {
			t.Errorf("the server's %s = %q, want %q", name, strings.ReplaceAll(got, refSecret, "<REF SECRET>"), strings.ReplaceAll(want, refSecret, "<REF SECRET>"))
		}
	}
	errText := leak(t, rt, "ex", map[string]any{"env": []string{"TOKEN", "MIX"}})
	testutil.Eventually(t, 10*time.Second, "the leak's stderr lines", func() bool {
		st, _ := rt.board.Get("ex")
		return len(st.StderrTail) > 0 && strings.HasPrefix(st.StderrTail[len(st.StderrTail)-1], "leak: ")
	})

	api := newAPI(t, rt)
	d := api.entry("ex")
	if d.Env["TOKEN"] != (config.SecretView{HasValue: true, Reference: "${REF_TOKEN}"}) || d.Env["MIX"].Reference != "" || d.Env["MIX"].Masked == "" ||
		d.Cwd != "${REF_DIR}" || d.Command[0] != "${REF_BIN}" {
		t.Errorf("GET entry: env %+v cwd %q command %q", d.Env, d.Cwd, d.Command)
	}
	getBody := string(api.do("GET", "/api/mcp/servers/ex", "").want(t, http.StatusOK).body)
	if !strings.Contains(getBody, `"TOKEN":{"has_value":true,"reference":"${REF_TOKEN}"}`) {
		t.Errorf("GET lacks the reference form: %s", getBody)
	}
	listBody := string(api.do("GET", "/api/mcp/servers", "").want(t, http.StatusOK).body)

	// A PATCH stores its references as sent and keeps the others.
	api.do("PATCH", "/api/mcp/servers/ex", `{"env": {"OTHER": "Bearer ${REF_TOKEN}"}}`).want(t, http.StatusOK)
	rt.waitReady(t, "ex")
	if got := mustCall(t, rt, "ex__env", map[string]any{"name": "OTHER"}).Content[0].Text; got != "Bearer "+refSecret {
		t.Errorf("OTHER after the PATCH is not the expanded reference")
	}
	file := string(readConfig(t, rt))
	for _, want := range []string{`"TOKEN": "${REF_TOKEN}"`, `"OTHER": "Bearer ${REF_TOKEN}"`, `"cwd": "${REF_DIR}"`, `"${REF_BIN}"`, `"LIT": "pa$$w0rd"`, `"ESC": "$${REF_TOKEN}"`} {
		if !strings.Contains(file, want) {
			t.Errorf("the file lacks %s:\n%s", want, strings.ReplaceAll(file, refSecret, "<REF SECRET>"))
		}
	}
	if strings.Contains(file, refSecret) || strings.Contains(file, dir) || strings.Contains(file, demoBin) {
		t.Errorf("the file holds an expanded value")
	}
	if d := api.entry("ex"); d.Env["OTHER"].Reference != "Bearer ${REF_TOKEN}" {
		t.Errorf("GET after PATCH: %+v", d.Env["OTHER"])
	}
	assertScrubbed(t, rt, []string{refSecret, "pre-" + refSecret, "Bearer " + refSecret}, errText, getBody, listBody, eventsJSON(all))
}

// An unset variable without a default fails that server alone, as an
// invalid config naming the variable, and is not retried.
func TestUnsetReferenceFailsAlone(t *testing.T) {
	bad := exampleServer("bad")
	bad.Env["TOKEN"] = "${REF_NOT_SET}"
	rt := start(t, Options{LookupEnv: refLookup(nil)}, bad, exampleServer("ok"))
	st := rt.waitSettled(t, "bad")
	if st.State != status.Failed || st.ErrorKind != status.KindInvalidConfig || !strings.Contains(st.Error, "REF_NOT_SET") ||
		!strings.Contains(st.Error, "env.TOKEN") || st.NextRetryAt != nil {
		t.Fatalf("bad = %+v, want failed/invalid_config naming env.TOKEN and REF_NOT_SET, no retry", st)
	}
	if ok := rt.waitSettled(t, "ok"); ok.State != status.Ready {
		t.Fatalf("ok = %+v", ok)
	}
	// A PATCH that brings in an unset variable fails its restart: it is
	// refused, the file is untouched and the server is back on its config.
	api := newAPI(t, rt)
	before := readConfig(t, rt)
	a := api.do("PATCH", "/api/mcp/servers/ok", `{"env": {"K": "${REF_NOT_SET}"}}`)
	if a.code != http.StatusBadGateway || !strings.Contains(string(a.body), "REF_NOT_SET") {
		t.Errorf("PATCH to an unset variable: %d %s", a.code, a.body)
	}
	if string(readConfig(t, rt)) != string(before) {
		t.Errorf("a failed PATCH changed the file")
	}
	if ok := rt.waitReady(t, "ok"); ok.ErrorKind != "" {
		t.Errorf("ok after the failed PATCH = %+v", ok)
	}
}

// A token pasted inside braces is a valid but not an environment-shaped
// name: it is masked in the view, never quoted by the unset-variable error
// (status, events, a PATCH's 502) and scrubbed as a secret.
func TestPastedSecretReferenceNeverShown(t *testing.T) {
	const pasted = "ghp_PastedToken0123456789abcdef"
	bad := exampleServer("bad")
	bad.Env["TOKEN"] = "Bearer ${" + pasted + "}"
	rt := start(t, Options{LookupEnv: refLookup(nil)}, bad, exampleServer("ok"))
	all := rt.Subscribe(events.SubscribeOptions{From: 1, Buffer: 1 << 14})
	t.Cleanup(all.Close)
	st := rt.waitSettled(t, "bad")
	if st.State != status.Failed || st.ErrorKind != status.KindInvalidConfig || !strings.Contains(st.Error, "env.TOKEN") ||
		!strings.Contains(st.Error, "unset variable") {
		t.Fatalf("bad = %+v, want failed/invalid_config naming env.TOKEN and an unset variable", st)
	}
	api := newAPI(t, rt)
	if d := api.entry("bad"); d.Env["TOKEN"].Reference != "" || d.Env["TOKEN"].Masked == "" {
		t.Errorf("GET shows the pasted reference: %+v", d.Env["TOKEN"])
	}
	rt.waitReady(t, "ok")
	a := api.do("PATCH", "/api/mcp/servers/ok", `{"env": {"K": "${sk_live_`+pasted+`}"}}`)
	if a.code != http.StatusBadGateway {
		t.Errorf("PATCH to a pasted reference: %d %s", a.code, a.body)
	}
	getBody := string(api.do("GET", "/api/mcp/servers", "").want(t, http.StatusOK).body)
	st, _ = rt.board.Get("bad")
	stJSON, _ := json.Marshal(st)
	for _, text := range []string{string(a.body), getBody, string(stJSON), eventsJSON(all)} {
		if strings.Contains(text, pasted) {
			t.Errorf("the pasted token is shown: %s", text)
		}
	}
}

// A malformed reference is a 400 naming the field, and a file holding one
// loads with that server invalid.
func TestMalformedReferenceRefused(t *testing.T) {
	data := `{"servers": {"bad": {"type": "local", "command": ["` + demoBin + `", "serve"], "env": {"K": "${unclosed", "` + testutil.MarkerEnv + `": "` + marker + `"}},
		"ok": {"type": "local", "command": ["` + demoBin + `", "serve"], "env": {"` + testutil.MarkerEnv + `": "` + marker + `"}}}}`
	rt := startWithFile(t, []byte(data))
	if st := rt.waitSettled(t, "bad"); st.State != status.Failed || st.ErrorKind != status.KindInvalidConfig || !strings.Contains(st.Error, "env.K") {
		t.Fatalf("bad = %+v", st)
	}
	if st := rt.waitSettled(t, "ok"); st.State != status.Ready {
		t.Fatalf("ok = %+v", st)
	}
	api := newAPI(t, rt)
	before := readConfig(t, rt)
	for body, field := range map[string]string{
		exampleBody(t, "new", map[string]any{"headers": map[string]string{"X": "${input:tok}"}}): "headers.X",
		exampleBody(t, "new", map[string]any{"cwd": "relative/dir"}):                             "cwd",
		exampleBody(t, "new", map[string]any{"command": []string{"${BIN"}}):                      "command[0]",
	} {
		if e := api.do("POST", "/api/mcp/servers", body).want(t, http.StatusBadRequest).apiError(t); e.Field != field {
			t.Errorf("POST %s: field %q, want %q", body, e.Field, field)
		}
	}
	if e := api.do("PATCH", "/api/mcp/servers/ok", `{"env": {"K": "a${"}}`).want(t, http.StatusBadRequest).apiError(t); e.Field != "env.K" {
		t.Errorf("PATCH: field %q", e.Field)
	}
	if string(readConfig(t, rt)) != string(before) {
		t.Errorf("a refused request changed the file")
	}
}

// A remote server's url, headers and bearer token made with references get
// the values on the wire; echoed back, they are scrubbed.
func TestRemoteReferencesExpanded(t *testing.T) {
	const bearer = "REF-BEARER-planted-81ac5f"
	var mu sync.Mutex
	var gotKey, gotAuth string
	getServer := func(*http.Request) *mcp.Server {
		return exampleserver.NewServer(exampleserver.Options{LeakTool: true, Stderr: io.Discard})
	}
	inner := mcp.NewStreamableHTTPHandler(getServer, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		gotKey, gotAuth = r.Header.Get("X-Key"), r.Header.Get("Authorization")
		mu.Unlock()
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	web := config.Server{Name: "web", Type: config.TypeHTTP, Enabled: true, URL: "${REF_URL}/mcp",
		Headers: map[string]string{"X-Key": "key=${REF_TOKEN}"},
		Auth:    &config.Auth{Kind: config.AuthBearer, Token: "${REF_BEARER}"}}
	rt := start(t, Options{LookupEnv: refLookup(map[string]string{"REF_URL": srv.URL, "REF_BEARER": bearer})}, web)
	if st := rt.waitSettled(t, "web"); st.State != status.Ready {
		t.Fatalf("web = %+v", st)
	}
	mu.Lock()
	key, auth := gotKey, gotAuth
	mu.Unlock()
	if key != "key="+refSecret || auth != "Bearer "+bearer {
		t.Errorf("the server did not get the expanded header and token")
	}
	errText := leak(t, rt, "web", map[string]any{"headers": []string{"X-Key", "Authorization"}})
	d := newAPI(t, rt).entry("web")
	if d.URL != "${REF_URL}/mcp" || d.Auth.TokenReference != "${REF_BEARER}" || d.Auth.TokenMasked != "" || d.Headers["X-Key"].Masked == "" {
		t.Errorf("entry: url %q auth %+v headers %+v", d.URL, d.Auth, d.Headers)
	}
	assertScrubbed(t, rt, []string{refSecret, "key=" + refSecret, bearer, "Bearer " + bearer}, errText)
}
