package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/internal/testutil/oauthfake"
	"github.com/openprogram/mcpvisor/runtime"
)

// More marker secrets: auth secrets, and a catalog source's.
const (
	secretT2     = "console-secret-t-93b0e1d4" // a bearer token typed in
	secretC      = "console-secret-C-0f7a2c61" // a stored client secret
	secretC2     = "console-secret-c-5d18e9b3" // a client secret typed in
	secretCatEnv = "console-secret-E-71c4a8f0" // in a catalog source file's env
	secretCatHdr = "console-secret-K-2a9d63e5" // in a catalog source file's headers
	// These two start with what is unique to them: Chromium's JSON.parse
	// message quotes about 10 characters from where the input broke.
	secretOverlay = "k6e2b17dO-console-secret" // in a catalog apply's overlay
	secretArgs    = "qc83f04aA-console-secret" // in a tool's arguments as JSON
)

// pkcs8 is a new P-256 key as PKCS #8 PEM.
func pkcs8(t *testing.T) string {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
}

// saveForm submits the open form and waits for its answer: the form
// closed (saved), or an error in it (refused: the form is then
// cancelled, and the console error of the refused answer dropped). It
// returns the body the page sent and whether the form was saved.
func saveForm(tb *tab, name string) (string, bool) {
	tb.t.Helper()
	form := `form[data-form=edit-` + name + `]`
	tb.do(chromedp.Click(chromedp.CSS(form + ` button[type=submit]`)))
	tb.waitJS(name+" saved or refused", `((f) => !f || f.querySelector('[data-form-error]').textContent !== '')(document.querySelector('`+form+`'))`)
	saved := !eval[bool](tb, `!!document.querySelector('`+form+`')`)
	if !saved {
		tb.do(chromedp.Click(chromedp.CSS(form + ` .actions button[type=button]`)))
		tb.expectProblem("/api/mcp/servers/" + name)
	}
	return tb.sent("PATCH", "/api/mcp/servers/"+name), saved
}

// refused submits the open form, which the API must refuse naming the
// field key: its input is marked and the form shows the error.
func refused(tb *tab, name, key string) string {
	tb.t.Helper()
	form := `form[data-form=edit-` + name + `]`
	tb.do(chromedp.Click(chromedp.CSS(form + ` button[type=submit]`)))
	tb.waitJS(name+"'s save refused, "+key+" marked", `((f) => !!f && f.querySelector('[data-form-error]').textContent !== '' && f.querySelector('[name="`+key+`"]').classList.contains('bad'))(document.querySelector('`+form+`'))`)
	tb.do(chromedp.Click(chromedp.CSS(form + ` .actions button[type=button]`)))
	tb.expectProblem("/api/mcp/servers/" + name)
	return tb.sent("PATCH", "/api/mcp/servers/"+name)
}

// schemaServer is a Streamable HTTP MCP server on loopback, with
// sessions (it tells the runtime when its tools change), with one tool,
// "good" (its argument an object: a JSON textarea); badTool is one whose output schema is past the runtime's
// nesting bound (unusable).
func schemaServer(t *testing.T) (string, *mcp.Server) {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "schema", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "good", InputSchema: json.RawMessage(`{"type":"object","properties":{"cfg":{"type":"object"}}}`)}, noResult)
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	return hs.URL + "/mcp", srv
}

func noResult(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{}, nil
}

func badTool() *mcp.Tool {
	deep := `{"type":"object"}`
	for range 70 {
		deep = `{"type":"object","properties":{"a":` + deep + `}}`
	}
	return &mcp.Tool{Name: "bad", InputSchema: json.RawMessage(`{"type":"object"}`), OutputSchema: json.RawMessage(deep)}
}

// leaksThroughMessage checks that the broken JSON input is one this
// browser's JSON.parse error message quotes the start of secret from: the
// input a test uses to show the page does not.
func leaksThroughMessage(tb *tab, input, secret string) {
	tb.t.Helper()
	msg := eval[string](tb, `(() => { try { JSON.parse(`+js(input)+`); return ''; } catch (e) { return e.message; } })()`)
	if !strings.Contains(msg, secret[:8]) {
		tb.t.Fatalf("this browser's JSON.parse message does not quote the input (%d bytes): the test cannot show the page hides it", len(msg))
	}
}

func openEdit(tb *tab, name string) string {
	tb.t.Helper()
	form := `form[data-form=edit-` + name + `]`
	tb.waitJS(name+"'s card", card(name)+` !== null`)
	tb.do(chromedp.Click(chromedp.CSS(`article[data-server=` + name + `] button[data-action=edit]`)))
	tb.waitJS(name+"'s edit form", sel(form, "true"))
	return form
}

func TestConsoleManage(t *testing.T) {
	began := time.Now()
	home := t.TempDir()
	plain := hostileServer(t) + "/mcp"
	cursor := map[string]any{"mcpServers": map[string]any{
		"catsrv":  map[string]any{"command": demoBin, "args": []string{"serve"}, "env": map[string]string{testutil.MarkerEnv: marker, "API_KEY": secretCatEnv}},
		"cathttp": map[string]any{"url": plain, "headers": map[string]string{"Authorization": "Bearer " + secretCatHdr}},
	}}
	writeJSONFile(t, home, ".cursor/mcp.json", cursor)
	keyA, keyB := pkcs8(t), pkcs8(t)
	as := oauthfake.New(t) // before the runtime: it outlives its shutdown
	schURL, sch := schemaServer(t)
	ex := exampleConfig("ex", nil)
	ex.Command = append(ex.Command, "-update-tool")
	off := exampleConfig("off", nil)
	off.Enabled = false
	rt, url, dir, cutter := consoleRuntimeCut(t, runtime.Options{Home: home},
		ex, off,
		config.Server{Name: "back", Type: config.TypeHTTP, Enabled: true, URL: "http://127.0.0.1:1/mcp"},
		config.Server{Name: "tok", Type: config.TypeHTTP, Enabled: true, URL: plain, Auth: &config.Auth{Kind: config.AuthBearer, Token: secretToken}},
		config.Server{Name: "oa", Type: config.TypeHTTP, Enabled: true, URL: plain, Auth: &config.Auth{Kind: config.AuthOAuth, ClientID: "cid", ClientSecret: secretC}},
		// Disabled: a PATCH of it saves without a restart, which would fail (no token endpoint).
		config.Server{Name: "cc", Type: config.TypeHTTP, Enabled: false, URL: "http://127.0.0.1:1/mcp",
			Auth: &config.Auth{Kind: config.AuthClientCredentials, ClientID: "cid", PrivateKey: keyA, TokenEndpointAuthMethod: config.AuthMethodPrivateKeyJWT}},
		as.Config("login"),
		config.Server{Name: "sch", Type: config.TypeHTTP, Enabled: true, URL: schURL},
	)
	browser := newBrowser(t)
	tb := openTab(t, browser, url)

	t.Run("the authorize link while a login waits, followed", func(t *testing.T) {
		tb.t = t
		link := `article[data-server=login] .authorize a`
		tb.waitJS("login authorizing, its link shown", stateIs("login", "authorizing")+` && `+sel(link, "true"))
		var want string
		for _, s := range rt.Servers() {
			if s.Name == "login" {
				want = s.AuthorizeURL
			}
		}
		got := eval[map[string]string](tb, `((a) => ({href: a.getAttribute('href'), target: a.target, rel: a.rel, text: a.textContent}))(document.querySelector(`+js(link)+`))`)
		if want == "" || got["href"] != want || !strings.HasPrefix(want, as.URL+"/authorize?") ||
			got["target"] != "_blank" || got["rel"] != "noopener noreferrer" || got["text"] != "authorize" {
			t.Errorf("the authorize link: %v; want href %s (the status's), target _blank, rel noopener noreferrer", got, want)
		}
		// The user clicks it: the new tab goes to the authorization
		// server, which redirects at once to the runtime's callback.
		login := tb.followNew(link)
		login.waitJS("the callback's page", `document.querySelector('h1')?.textContent === 'Logged in' && location.origin !== `+js(as.URL))
		if opener := eval[bool](login, `window.opener === null && document.referrer === ''`); !opener {
			t.Error("the login tab has an opener or a referrer from the console")
		}
		tb.waitJS("login ready with its tools, the link gone", stateIs("login", "ready")+` && `+onCard("login",
			`!c.querySelector('.authorize a') && /^tools \([1-9]\d*\)$/.test(c.querySelector('details.tools > summary').textContent)`))
		if authorizes, _, codes, _ := as.Counts(); authorizes != 1 || codes != 1 {
			t.Errorf("the authorization server saw %d authorizations and %d code grants, want 1 and 1", authorizes, codes)
		}
		held := login.held()
		for _, s := range []string{oauthfake.AccessMarker, oauthfake.RefreshMarker, oauthfake.SecretMarker} {
			if strings.Contains(held, s) {
				t.Errorf("the login tab holds the planted secret %.12s", s)
			}
		}
		login.noProblems()
	})

	t.Run("h() refuses style, srcdoc and href", func(t *testing.T) {
		tb.t = t
		got := eval[string](tb, `import('/assets/dom.js').then((m) => ['style', 'srcdoc', 'href', 'HREF', 'title'].map((k) => {
			try { m.h('a', {[k]: 'x'}); return k + ' set'; } catch { return k + ' refused'; } }).join())`)
		if want := "style refused,srcdoc refused,href refused,HREF refused,title set"; got != want {
			t.Errorf("h(): %s, want %s", got, want)
		}
	})

	t.Run("next retry of a server in backoff", func(t *testing.T) {
		tb.t = t
		tb.waitJS("back's next retry, dated and relative", onCard("back",
			`((e) => !!e && !!e.dataset.at && /\((in \d+ s|\d+ s ago)\)$/.test(e.textContent))(c.querySelector('[data-field=next_retry_at]'))`))
	})

	t.Run("disable, enable, restart", func(t *testing.T) {
		tb.t = t
		tb.waitJS("ex ready", stateIs("ex", "ready"))
		tb.do(chromedp.Click(chromedp.CSS(`article[data-server=ex] button[data-action=toggle]`)))
		tb.waitJS("ex disabled, no Restart offered", onCard("ex", `c.querySelector('[data-state]').textContent === 'disabled' && !c.querySelector('[data-action=restart]') && c.querySelector('[data-action=toggle]').textContent === 'Enable'`))
		if body := tb.sent("PATCH", "/api/mcp/servers/ex"); body != `{"enabled":false}` {
			t.Errorf("disable sent %s", body)
		}
		if s, _ := readFile(t, dir).Get("ex"); s.Enabled {
			t.Error("ex enabled in the file after Disable")
		}
		tb.do(chromedp.Click(chromedp.CSS(`article[data-server=ex] button[data-action=toggle]`)))
		tb.waitJS("ex ready again", stateIs("ex", "ready")+` && !!`+card("ex")+`.querySelector('[data-action=restart]')`)
		if body := tb.sent("PATCH", "/api/mcp/servers/ex"); body != `{"enabled":true}` {
			t.Errorf("enable sent %s", body)
		}
		pid := serverPID(t, rt, "ex")
		tb.waitJS("ex's pid shown", onCard("ex", `c.querySelector('[data-field=pid]').textContent === '`+itoa(pid)+`'`))
		tb.do(chromedp.Click(chromedp.CSS(`article[data-server=ex] button[data-action=restart]`)))
		tb.waitJS("ex ready on a new pid", onCard("ex", `c.querySelector('[data-state]').textContent === 'ready' && c.querySelector('[data-field=pid]').textContent !== '`+itoa(pid)+`'`))
		if body := tb.sent("POST", "/api/mcp/servers/ex/restart"); body != `{}` {
			t.Errorf("restart sent %q", body)
		}
	})

	t.Run("prompt get with completions", func(t *testing.T) {
		tb.t = t
		p := `article[data-server=ex] details[data-prompt=ex__greet]`
		tb.waitJS("ex's prompt", sel(p, "true"))
		tb.do(chromedp.Click(chromedp.CSS(`article[data-server=ex] details.prompts > summary`)),
			chromedp.Click(chromedp.CSS(p+` > summary`)),
			chromedp.SendKeys(chromedp.CSS(p+` input[name=name]`), "A"))
		tb.waitJS("the server's completions under the input", sel(p+` datalist`, `[...e.options].map((o) => o.value).join() === 'Ada,Alan,Alice'`))
		if body := tb.sent("POST", "/api/mcp/complete"); body != `{"prompt":"ex__greet","argument":"name","value":"A","context":{}}` {
			t.Errorf("complete sent %s", body)
		}
		tb.do(chromedp.SendKeys(chromedp.CSS(p+` input[name=name]`), "da"),
			chromedp.Click(chromedp.CSS(p+` button[type=submit]`)))
		tb.waitJS("the prompt's message", sel(p+` .result`, `e.textContent.includes('Please greet Ada.')`))
		if body := tb.sent("POST", "/api/mcp/prompts/ex__greet/get"); body != `{"arguments":{"name":"Ada"}}` {
			t.Errorf("get sent %s", body)
		}
	})

	t.Run("tool search and the model's tools", func(t *testing.T) {
		tb.t = t
		tb.do(chromedp.Click(chromedp.CSS(`nav button[data-tab=tools]`)),
			chromedp.SendKeys(chromedp.CSS(`#tab-tools input[name=q]`), "add two numbers"),
			chromedp.Click(chromedp.CSS(`#tab-tools button[type=submit]`)))
		tb.waitJS("ex__add found", sel(`#tab-tools tr[data-match=ex__add]`, "true"))
		tb.do(chromedp.Click(chromedp.CSS(`#tab-tools button[data-action=model]`)))
		tb.waitJS("the model's list", sel(`#tab-tools [data-model] pre`, `e.textContent.includes('"ex__add"')`))
	})

	t.Run("resource read, subscribe, update, unsubscribe", func(t *testing.T) {
		tb.t = t
		r := `#tab-resources`
		tb.do(chromedp.Click(chromedp.CSS(`nav button[data-tab=resources]`)),
			chromedp.SetValue(chromedp.CSS(r+` select[name=server]`), "ex"),
			chromedp.SendKeys(chromedp.CSS(r+` input[name=uri]`), "demo://notes/7"),
			chromedp.Click(chromedp.CSS(r+` button[data-action=read]`)))
		tb.waitJS("the note read", sel(r+` [data-read] pre`, `e.textContent === 'note 7'`))
		tb.do(chromedp.Click(chromedp.CSS(r + ` button[data-action=subscribe]`)))
		tb.waitJS("the subscription listed", sel(r+` tr[data-sub]`, "true"))
		if _, err := rt.CallTool(context.Background(), "ex__update", json.RawMessage(`{"id":"7"}`)); err != nil {
			t.Fatal(err)
		}
		tb.waitJS("its update shown", sel(r+` li[data-update="demo://notes/7"]`, `e.textContent.includes('ex')`))
		tb.do(chromedp.Click(chromedp.CSS(r + ` tr[data-sub] button`)))
		tb.waitJS("the subscription gone", `!document.querySelector('`+r+` tr[data-sub]')`)
		if !strings.Contains(strings.Join(tb.urls(), "\n"), "DELETE /api/mcp/resources/subscriptions/") {
			t.Error("no DELETE of the subscription sent")
		}
		tb.do(chromedp.Click(chromedp.CSS(`nav button[data-tab=servers]`)))
	})

	t.Run("reload", func(t *testing.T) {
		tb.t = t
		tb.do(chromedp.Click(chromedp.CSS(`#reload`)))
		tb.waitJS("its answer", sel(`#reloaded`, `e.textContent === 'reloaded: no change'`))
	})

	t.Run("auth secrets: only the one touched is sent", func(t *testing.T) {
		tb.t = t
		tb.waitJS("tok ready", stateIs("tok", "ready"))
		form := openEdit(tb, "tok")
		tb.do(chromedp.SendKeys(chromedp.CSS(form+` input[data-secret="auth.token"]`), secretT2))
		// Edit and Delete keep the open form, and what is typed in it.
		tb.do(chromedp.Click(chromedp.CSS(`article[data-server=tok] button[data-action=edit]`)),
			chromedp.Click(chromedp.CSS(`article[data-server=tok] button[data-action=delete]`)))
		tb.waitJS("the toast: the form is open", sel(`#toast`, `e.textContent === 'tok: its edit form is open: save or cancel it first'`))
		if !eval[bool](tb, sel(form+` input[data-secret="auth.token"]`, `e.value === `+js(secretT2))+` && !document.querySelector('article[data-server=tok] [data-action=confirm-delete]')`) {
			t.Error("Edit or Delete replaced tok's open edit form")
		}
		if body, saved := saveForm(tb, "tok"); !saved || body != `{"auth":{"token":"`+secretT2+`"}}` {
			t.Errorf("new token: saved %v, sent %d bytes (not shown: it holds the secret)", saved, len(body))
		}
		if s, _ := readFile(t, dir).Get("tok"); s.Auth.Token != secretT2 {
			t.Error("tok's token on disk not the new one")
		}
		// bearer requires its token: the page says so, the API refuses.
		form = openEdit(tb, "tok")
		tb.waitJS("tok's token labelled required", sel(form+` [data-required="auth.token"]`, "true"))
		tb.do(chromedp.Click(chromedp.CSS(form + ` button[data-delete="auth.token"]`)))
		if body := refused(tb, "tok", "auth.token"); body != `{"auth":{"token":""}}` {
			t.Errorf("deleted token: sent %s", body)
		}
		if s, _ := readFile(t, dir).Get("tok"); s.Auth.Token != secretT2 {
			t.Error("tok's token on disk changed by a refused delete")
		}
		form = openEdit(tb, "oa")
		tb.do(chromedp.SendKeys(chromedp.CSS(form+` input[data-secret="auth.client_secret"]`), secretC2))
		if body, saved := saveForm(tb, "oa"); !saved || body != `{"auth":{"client_secret":"`+secretC2+`"}}` {
			t.Errorf("new client secret: saved %v, sent %d bytes (not shown: it holds the secret)", saved, len(body))
		}
		if s, _ := readFile(t, dir).Get("oa"); s.Auth.ClientSecret != secretC2 {
			t.Error("oa's client secret on disk not the new one")
		}
		form = openEdit(tb, "oa")
		if eval[bool](tb, `!!document.querySelector('`+form+` [data-required]')`) {
			t.Error("oa's client secret (optional for oauth) labelled required")
		}
		tb.do(chromedp.Click(chromedp.CSS(form + ` button[data-delete="auth.client_secret"]`)))
		if body, saved := saveForm(tb, "oa"); !saved || body != `{"auth":{"client_secret":""}}` {
			t.Errorf("deleted client secret: saved %v, sent %s", saved, body)
		}
		if s, _ := readFile(t, dir).Get("oa"); s.Auth.ClientSecret != "" {
			t.Error("oa's client secret still on disk after its delete")
		}
		form = openEdit(tb, "cc")
		tb.do(chromedp.SetValue(chromedp.CSS(form+` textarea[data-secret="auth.private_key"]`), keyB))
		if body, saved := saveForm(tb, "cc"); !saved || body != `{"auth":{"private_key":`+js(keyB)+`}}` {
			t.Errorf("new private key: saved %v, sent %d bytes (not shown: it holds the secret)", saved, len(body))
		}
		// client_credentials requires a credential: its only one is labelled, its delete refused.
		form = openEdit(tb, "cc")
		tb.waitJS("cc's key labelled required", sel(form+` [data-required="auth.private_key"]`, "true"))
		tb.do(chromedp.Click(chromedp.CSS(form + ` button[data-delete="auth.private_key"]`)))
		// The API names the first of the credentials it wants: auth.client_secret.
		if body := refused(tb, "cc", "auth.client_secret"); body != `{"auth":{"private_key":""}}` {
			t.Errorf("deleted private key: sent %s", body)
		}
		if s, _ := readFile(t, dir).Get("cc"); s.Auth.PrivateKey != keyB {
			t.Error("cc's private key on disk changed by a refused delete")
		}
	})

	t.Run("catalog and pasted diff", func(t *testing.T) {
		tb.t = t
		tb.do(chromedp.Click(chromedp.CSS(`nav button[data-tab=catalog]`)))
		tb.waitJS("the cursor entries", sel(`#tab-catalog tr[data-entry="cursor/catsrv"]`, "true")+` && `+sel(`#tab-catalog tr[data-entry="cursor/cathttp"]`, "true"))
		tb.do(chromedp.SetValue(chromedp.CSS(`#tab-catalog select[name=source]`), "cursor"),
			chromedp.Click(chromedp.CSS(`#tab-catalog button[data-diff-button]`)))
		tb.waitJS("its diff", sel(`#tab-catalog tr[data-diff=catsrv] td.diff-add`, "true"))
		content, _ := json.Marshal(cursor)
		paste := `document.querySelector('#tab-catalog details[data-paste]')`
		tb.do(chromedp.Click(chromedp.CSS(`#tab-catalog details[data-paste] > summary`)),
			chromedp.Evaluate[chromedp.Void](paste+`.querySelector('select').value = 'cursor'; `+paste+`.querySelector('textarea').value = `+js(string(content))),
			// The tab shown, clicked, is not re-read: the paste stays.
			chromedp.Click(chromedp.CSS(`nav button[data-tab=catalog]`)))
		if !eval[bool](tb, paste+`.open && `+paste+`.querySelector('textarea').value !== ''`) {
			t.Error("clicking the catalog tab while shown lost the pasted config")
		}
		tb.do(chromedp.Click(chromedp.CSS(`#tab-catalog details[data-paste] button[type=submit]`)))
		tb.waitJS("the pasted config's diff", sel(`#tab-catalog [data-paste-diff] tr[data-diff=cathttp] td.diff-add`, "true"))
		if body := tb.sent("POST", "/api/mcp/catalog/diff"); !strings.HasPrefix(body, `{"format":"cursor","content":`) {
			t.Errorf("pasted diff sent %.40s…", body)
		}
		tb.waitJS("the pasted config cleared", paste+`.querySelector('textarea').value === ''`)

		// A broken overlay holding a secret: the page says so without
		// quoting it (Chromium's JSON.parse message quotes the input).
		apply := `#tab-catalog tr[data-entry="cursor/cathttp"]`
		brokenOverlay := `{"headers": {"X-Key": ` + secretOverlay + `}}`
		leaksThroughMessage(tb, brokenOverlay, secretOverlay)
		tb.do(chromedp.Click(chromedp.CSS(apply+` button`)),
			chromedp.SetValue(chromedp.CSS(apply+` input[name=as]`), "cathttp2"),
			chromedp.SetValue(chromedp.CSS(apply+` textarea[name=overlay]`), brokenOverlay),
			chromedp.Click(chromedp.CSS(apply+` button[type=submit]`)))
		tb.waitJS("the overlay refused", sel(apply+` .apply-result`, `e.textContent === 'overlay: not valid JSON'`))
		if strings.Contains(eval[string](tb, `document.documentElement.outerHTML + document.body.innerText`), secretOverlay[:8]) {
			t.Error("the broken overlay's secret is in the page")
		}
		// Fixed, it is applied, and the overlay no longer kept.
		tb.do(chromedp.SetValue(chromedp.CSS(apply+` textarea[name=overlay]`), `{"headers": {"X-Key": "`+secretOverlay+`"}}`),
			chromedp.Click(chromedp.CSS(apply+` button[type=submit]`)))
		tb.waitJS("cathttp2 added, the overlay cleared", sel(apply+` .apply-result`, `e.textContent === 'added'`)+` && `+sel(apply+` textarea[name=overlay]`, `e.value === ''`))
		if s, ok := readFile(t, dir).Get("cathttp2"); !ok || s.Headers["X-Key"] != secretOverlay {
			t.Errorf("cathttp2 on disk: %v, want its overlay's header", ok)
		}
		tb.do(chromedp.Click(chromedp.CSS(`nav button[data-tab=servers]`)))
	})

	t.Run("event stream cut: the page resumes and catches up", func(t *testing.T) {
		tb.t = t
		began := time.Now()
		defer func() { t.Logf("the stream cut took %v", time.Since(began)) }()
		tb.waitJS("off disabled", stateIs("off", "disabled"))
		cutter.cut()
		tb.waitJS("the page sees the stream cut", `document.getElementById('live').textContent === 'reconnecting…'`)
		if _, err := rt.PatchServer(context.Background(), "off", []byte(`{"enabled":true}`)); err != nil {
			t.Fatal(err)
		}
		tb.waitJS("off ready, the stream live again", stateIs("off", "ready")+` && document.getElementById('live').textContent === 'live'`)
		var reconnect, reopen bool
		for _, r := range cutter.requests() {
			reconnect = reconnect || strings.HasPrefix(r, "Last-Event-ID: ") && len(r) > len("Last-Event-ID: ")
			reopen = reopen || strings.HasPrefix(r, "last_event_id=") && len(r) > len("last_event_id=")
		}
		if !reconnect || !reopen {
			t.Errorf("want the browser's reconnect with Last-Event-ID (%v) and, after the 503, the page's re-open with ?last_event_id= (%v); stream requests: %q",
				reconnect, reopen, cutter.requests())
		}
		tb.expectProblem("status of 503 (Service Unavailable)") // the cutter's
	})

	t.Run("an unusable output schema's note goes with its tool", func(t *testing.T) {
		tb.t = t
		note := `article[data-server=sch] [data-note="sch__bad"]`
		tb.waitJS("sch ready", stateIs("sch", "ready"))
		sch.AddTool(badTool(), noResult) // after the page listens: it sees the event
		tb.waitJS("sch's note on bad", sel(note, `e.textContent.startsWith('tool sch__bad: its output schema is unusable')`))
		tb.waitJS("bad listed", onCard("sch", `c.querySelector('details.tools > summary').textContent === 'tools (2)'`))
		sch.RemoveTools("bad")
		tb.waitJS("bad gone from sch's tools, its note with it", onCard("sch", `c.querySelector('details.tools > summary').textContent === 'tools (1)'`)+` && !document.querySelector(`+js(note)+`)`)

		// Tool arguments that are not JSON, holding a secret: refused
		// without quoting them.
		good := `article[data-server=sch] details[data-tool=sch__good]`
		brokenArgs := `{"key": ` + secretArgs + `}`
		leaksThroughMessage(tb, brokenArgs, secretArgs)
		tb.do(chromedp.Click(chromedp.CSS(`article[data-server=sch] details.tools > summary`)))
		tb.waitJS("sch's tools open", sel(`article[data-server=sch] details.tools`, `e.open`))
		tb.do(chromedp.Click(chromedp.CSS(good + ` > summary`)))
		tb.waitJS("good's call form", sel(good+` textarea[name=cfg]`, "true"))
		tb.do(chromedp.SetValue(chromedp.CSS(good+` textarea[name=cfg]`), brokenArgs),
			chromedp.Click(chromedp.CSS(good+` button[type=submit]`)))
		tb.waitJS("the arguments refused", sel(good+` .result .error`, `e.textContent === 'cfg: not valid JSON'`))
		if strings.Contains(eval[string](tb, `document.documentElement.outerHTML + document.body.innerText`), secretArgs[:8]) {
			t.Error("the broken arguments' secret is in the page")
		}
		// What the test typed stays in the input (the user may fix it): clear it before the grep.
		tb.do(chromedp.Evaluate[chromedp.Void](`document.querySelector(` + js(good+` textarea[name=cfg]`) + `).value = ''`))
	})

	t.Run("no secret reaches the page", func(t *testing.T) {
		tb.t = t
		all := tb.everything()
		for _, s := range []string{secretToken, secretT2, secretC, secretC2, secretCatEnv, secretCatHdr, secretOverlay, secretArgs, keyA[40:80], keyB[40:80],
			oauthfake.AccessMarker, oauthfake.RefreshMarker, oauthfake.SecretMarker} {
			if strings.Contains(all, s) {
				t.Errorf("the page holds or received the planted secret %.16s", s)
			}
		}
		if !strings.Contains(all, "cathttp") || !strings.Contains(all, "****") {
			t.Error("the grep saw no catalog answer or no mask")
		}
		tb.noProblems()
	})
	t.Logf("browser tests took %v", time.Since(began))
}
