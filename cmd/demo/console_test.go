package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/runtime"
)

// Marker secrets planted in the config: none may reach the page.
const (
	secretA      = "console-secret-A-7f3c19d2"
	secretB      = "console-secret-B-81e4a0c5"
	secretHeader = "console-secret-H-5b2d77e1"
	secretToken  = "console-secret-T-c09a4f36"
	secretNew    = "console-secret-N-2e8b51aa" // typed into the edit form
	secretOdd    = "console-secret-O-4a90c3e7" // beside the odd command
	secretRef    = "console-secret-R-d17f2b08" // a header of the server whose url is a reference
	secretRot    = "console-secret-X-6c3e95f4" // typed in to rotate secretRef
)

// oddCommand round-trips through the edit form only if the form keeps
// arguments exactly: a multi-line one, an empty one, a padded one. It
// runs the example server: the script execs its $0.
func oddCommand() []string {
	return []string{"/bin/sh", "-c", "true\nexec \"$0\" serve", demoBin, "", " padded "}
}

// xssPayload is what a hostile server puts in a tool description and on
// its stderr: inserted as HTML it would make an img element and run code.
const xssPayload = `<img src=x onerror="window.__xss=1">`

// consoleRuntime runs a runtime with servers behind `demo run`'s handler
// on a loopback port, with opts.Home for the catalog; it stops when the
// test ends. It returns the runtime, the page's URL and the state dir.
func consoleRuntime(t *testing.T, opts runtime.Options, servers ...config.Server) (*runtime.Runtime, string, string) {
	t.Helper()
	rt, url, dir, _ := consoleRuntimeCut(t, opts, servers...)
	return rt, url, dir
}

// streamCutter ends the event streams being served and answers the next
// stream request 503, as a runtime that is stopping does.
type streamCutter struct {
	mu      sync.Mutex
	cancels []context.CancelFunc
	refuse  bool
	seen    []string // per stream request: "Last-Event-ID: n", "last_event_id=n" or ""
}

// requests lists how each stream request said where to resume.
func (c *streamCutter) requests() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.seen...)
}

// cut ends every stream open now and refuses the next one.
func (c *streamCutter) cut() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, cancel := range c.cancels {
		cancel()
	}
	c.cancels, c.refuse = nil, true
}

func (c *streamCutter) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path != "/api/mcp/events" {
			next.ServeHTTP(w, req)
			return
		}
		c.mu.Lock()
		switch {
		case req.Header.Get("Last-Event-ID") != "":
			c.seen = append(c.seen, "Last-Event-ID: "+req.Header.Get("Last-Event-ID"))
		case req.URL.Query().Has("last_event_id"):
			c.seen = append(c.seen, "last_event_id="+req.URL.Query().Get("last_event_id"))
		default:
			c.seen = append(c.seen, "")
		}
		if c.refuse {
			c.refuse = false
			c.mu.Unlock()
			http.Error(w, "stopping", http.StatusServiceUnavailable)
			return
		}
		ctx, cancel := context.WithCancel(req.Context())
		c.cancels = append(c.cancels, cancel)
		c.mu.Unlock()
		defer cancel()
		next.ServeHTTP(w, req.WithContext(ctx))
	})
}

// consoleRuntimeCut is consoleRuntime, with the cutter of its event streams.
func consoleRuntimeCut(t *testing.T, opts runtime.Options, servers ...config.Server) (*runtime.Runtime, string, string, *streamCutter) {
	t.Helper()
	dir := t.TempDir()
	testutil.WriteConfig(t, dir, servers...)
	opts.StateDir = dir
	opts.Logger = slog.New(slog.NewTextHandler(&testutil.Buffer{}, nil))
	opts.StopGrace = 500 * time.Millisecond
	rt, err := runtime.Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cutter := &streamCutter{}
	srv := newAPIServer(cutter.wrap(managementHandler(rt)), opts.Logger, apiTimeouts{})
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		if err := rt.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		srv.Close()
		<-served
		if left := testutil.ProcessesWithMarker(marker); len(left) > 0 {
			t.Errorf("processes left: %v", left)
		}
	})
	return rt, "http://" + ln.Addr().String() + "/", dir, cutter
}

// exampleConfig is the example server under name, with env on top of
// the marker.
func exampleConfig(name string, env map[string]string) config.Server {
	e := map[string]string{testutil.MarkerEnv: marker}
	for k, v := range env {
		e[k] = v
	}
	return config.Server{Name: name, Type: config.TypeLocal, Enabled: true, TimeoutSeconds: 10,
		Command: []string{demoBin, "serve"}, Env: e}
}

// hostileServer is a Streamable HTTP MCP server on loopback whose tool
// description is the XSS payload.
func hostileServer(t *testing.T) string {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "hostile", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "show", Description: "shows " + xssPayload, InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: xssPayload}}}, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true}))
	t.Cleanup(hs.Close)
	return hs.URL
}

// card is the JavaScript for a server's card.
func card(name string) string {
	return `document.querySelector('article[data-server=` + js(name) + `]')`
}

// onCard is a page condition on a server's card, cond an expression of c.
func onCard(name, cond string) string { return `((c) => !!c && (` + cond + `))(` + card(name) + `)` }

// stateIs is a page condition: the server's card shows state.
func stateIs(name, state string) string {
	return onCard(name, `c.querySelector('[data-state]').textContent === `+js(state))
}

// sel is a page condition on the element selector finds, cond an
// expression of e.
func sel(selector, cond string) string {
	return `((e) => !!e && (` + cond + `))(document.querySelector(` + js(selector) + `))`
}

func TestConsole(t *testing.T) {
	began := time.Now()
	home := t.TempDir()
	cursor := map[string]any{"mcpServers": map[string]any{"imported": map[string]any{
		"command": demoBin, "args": []string{"serve"}, "env": map[string]string{testutil.MarkerEnv: marker}}}}
	writeJSONFile(t, home, ".cursor/mcp.json", cursor)
	hostile := hostileServer(t)
	refs := map[string]string{"MCP_URL": hostile + "/mcp", "PORT": hostile[strings.LastIndex(hostile, ":")+1:]}
	lookup := func(name string) (string, bool) { v, ok := refs[name]; return v, ok }
	rt, url, dir := consoleRuntime(t, runtime.Options{Home: home, LookupEnv: lookup},
		exampleConfig("ex", map[string]string{"SECRET_A": secretA, "SECRET_B": secretB}),
		config.Server{Name: "rem", Type: config.TypeHTTP, Enabled: true, URL: "http://127.0.0.1:1/mcp",
			Headers: map[string]string{"X-Api-Key": secretHeader}, Auth: &config.Auth{Kind: config.AuthBearer, Token: secretToken}},
		config.Server{Name: "hostile", Type: config.TypeHTTP, Enabled: true, URL: hostile + "/mcp"},
		config.Server{Name: "odd", Type: config.TypeLocal, Enabled: true, Command: oddCommand(),
			Env: map[string]string{testutil.MarkerEnv: marker, "SECRET_O": secretOdd}},
		config.Server{Name: "refd", Type: config.TypeHTTP, Enabled: true, URL: "${MCP_URL}",
			Headers: map[string]string{"X-Key": secretRef}},
	)
	browser := newBrowser(t)
	tb := openTab(t, browser, url)
	t.Logf("browser up and page loading after %v", time.Since(began))

	t.Run("states", func(t *testing.T) {
		tb.t = t
		tb.waitJS("ex ready", stateIs("ex", "ready"))
		tb.waitJS("hostile ready", stateIs("hostile", "ready"))
		tb.waitJS("rem retrying with its error", onCard("rem", `['backoff', 'starting'].includes(c.querySelector('[data-state]').textContent) && !!c.querySelector('[data-field=error], [data-field=last_error]') && /connection refused/.test(c.textContent)`))
		tb.waitJS("the event stream open", `document.getElementById('live').textContent === 'live'`)
	})

	t.Run("killed server recovers live", func(t *testing.T) {
		tb.t = t
		pid := serverPID(t, rt, "ex")
		tb.waitJS("ex's pid shown", onCard("ex", `c.querySelector('[data-field=pid]').textContent === '`+itoa(pid)+`'`))
		if err := testutil.Kill(pid); err != nil {
			t.Fatal(err)
		}
		tb.waitJS("ex back, restarted once, on a new pid", onCard("ex", `c.querySelector('[data-state]').textContent === 'ready' && c.querySelector('[data-field=restarts]').textContent === '1' && c.querySelector('[data-field=pid]').textContent !== '`+itoa(pid)+`'`))
	})

	t.Run("add through the form", func(t *testing.T) {
		tb.t = t
		tb.do(chromedp.Click(chromedp.CSS(`#add-server`)))
		tb.do(chromedp.SendKeys(chromedp.CSS(`form[data-form=add] input[name=name]`), "added"),
			chromedp.SendKeys(chromedp.CSS(`form[data-form=add] textarea[data-arg]`), demoBin),
			chromedp.Click(chromedp.CSS(`form[data-form=add] button[data-add=arg]`)),
			chromedp.SendKeys(chromedp.CSS(`form[data-form=add] .arg:nth-child(2) textarea`), "serve"),
			chromedp.Click(chromedp.CSS(`form[data-form=add] button[data-add=env]`)),
			chromedp.SendKeys(chromedp.CSS(`form[data-form=add] input[data-new-name=env]`), testutil.MarkerEnv),
			chromedp.SendKeys(chromedp.CSS(`form[data-form=add] input[data-new-value=env]`), marker),
			chromedp.Click(chromedp.CSS(`form[data-form=add] button[type=submit]`)))
		tb.waitJS("added ready", stateIs("added", "ready"))
		body := tb.sent("POST", "/api/mcp/servers")
		want := `{"name":"added","type":"local","command":["` + demoBin + `","serve"],"env":{"` + testutil.MarkerEnv + `":"` + marker + `"}}`
		if body != want {
			t.Errorf("POST body %s, want %s", body, want)
		}
		if s, ok := readFile(t, dir).Get("added"); !ok || s.Command[0] != demoBin {
			t.Errorf("added not in the file as sent: %+v", s)
		}
	})

	t.Run("edit one secret", func(t *testing.T) {
		tb.t = t
		tb.do(chromedp.Click(chromedp.CSS(`article[data-server=ex] button[data-action=edit]`)))
		form := `form[data-form=edit-ex]`
		tb.waitJS("the edit form", sel(form, "true"))
		// Each secret input starts empty and shows the stored name with its mask.
		got := eval[[]string](tb, `[...document.querySelectorAll('`+form+` [data-map=env] .secret-field')].map((r) => r.querySelector('label').textContent + ' ' + r.querySelector('[data-stored]').textContent + ' [' + r.querySelector('input').value + ']')`)
		want := []string{testutil.MarkerEnv + " ****" + marker[len(marker)-4:] + " []", "SECRET_A ****" + secretA[len(secretA)-4:] + " []", "SECRET_B ****" + secretB[len(secretB)-4:] + " []"}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("env rows %q, want %q", got, want)
		}
		// A secret input is a masked text input, which no password manager offers to store.
		if got := eval[string](tb, `((e) => e.type + ' ' + e.autocomplete + ' ' + getComputedStyle(e).webkitTextSecurity)(document.querySelector('`+form+` input[data-secret="env.SECRET_A"]'))`); got != "text off disc" {
			t.Errorf("secret input: %q, want a text input, autocomplete off, masked", got)
		}
		if n := eval[int](tb, `document.querySelectorAll('input[type=password]').length`); n != 0 {
			t.Errorf("%d password inputs", n)
		}
		tb.do(chromedp.SendKeys(chromedp.CSS(form+` input[data-secret="env.SECRET_A"]`), secretNew),
			chromedp.Click(chromedp.CSS(form+` button[type=submit]`)))
		tb.waitJS("the form closed after the save", `!document.querySelector(`+js(form)+`)`)
		if body := tb.sent("PATCH", "/api/mcp/servers/ex"); body != `{"env":{"SECRET_A":"`+secretNew+`"}}` {
			t.Errorf("PATCH body %s: want only the edited secret", body)
		}
		s, _ := readFile(t, dir).Get("ex")
		if s.Env["SECRET_A"] != secretNew || s.Env["SECRET_B"] != secretB || s.Env[testutil.MarkerEnv] != marker || len(s.Env) != 3 {
			t.Errorf("env on disk after editing SECRET_A: %d keys, SECRET_A new %v, SECRET_B kept %v, marker kept %v",
				len(s.Env), s.Env["SECRET_A"] == secretNew, s.Env["SECRET_B"] == secretB, s.Env[testutil.MarkerEnv] == marker)
		}
		// Deleting is explicit: the delete control sends "" for that name.
		tb.waitJS("ex ready again", stateIs("ex", "ready"))
		tb.do(chromedp.Click(chromedp.CSS(`article[data-server=ex] button[data-action=edit]`)))
		tb.waitJS("the edit form", sel(form, "true"))
		tb.do(chromedp.Click(chromedp.CSS(form+` button[data-delete="env.SECRET_B"]`)),
			chromedp.Click(chromedp.CSS(form+` button[type=submit]`)))
		tb.waitJS("the form closed after the save", `!document.querySelector(`+js(form)+`)`)
		if body := tb.sent("PATCH", "/api/mcp/servers/ex"); body != `{"env":{"SECRET_B":""}}` {
			t.Errorf("PATCH body %s: want SECRET_B deleted only", body)
		}
		s, _ = readFile(t, dir).Get("ex")
		if _, has := s.Env["SECRET_B"]; has || s.Env["SECRET_A"] != secretNew || len(s.Env) != 2 {
			t.Errorf("env on disk after deleting SECRET_B: %d keys, SECRET_B there %v", len(s.Env), has)
		}
		// The remote server's secrets show as masks in an edit form too.
		tb.do(chromedp.Click(chromedp.CSS(`article[data-server=rem] button[data-action=edit]`)))
		tb.waitJS("rem's form with the stored header and token masked", sel(`form[data-form=edit-rem]`,
			`e.querySelector('[data-stored="headers.X-Api-Key"]').textContent === '****`+secretHeader[len(secretHeader)-4:]+`' && e.querySelector('[data-stored="auth.token"]').textContent === '****`+secretToken[len(secretToken)-4:]+`' && e.querySelector('input[data-secret="auth.token"]').value === ''`))
	})

	t.Run("edit keeps an odd command", func(t *testing.T) {
		tb.t = t
		form := `form[data-form=edit-odd]`
		tb.do(chromedp.Click(chromedp.CSS(`article[data-server=odd] button[data-action=edit]`)))
		tb.waitJS("odd's edit form", sel(form, "true"))
		if got := eval[[]string](tb, `[...document.querySelectorAll('`+form+` textarea[data-arg]')].map((t) => t.value)`); !slices.Equal(got, oddCommand()) {
			t.Errorf("argument boxes %q, want %q", got, oddCommand())
		}
		tb.do(chromedp.SendKeys(chromedp.CSS(form+` input[data-secret="env.SECRET_O"]`), secretNew),
			chromedp.Click(chromedp.CSS(form+` button[type=submit]`)))
		tb.waitJS("the form closed after the save", `!document.querySelector(`+js(form)+`)`)
		if body := tb.sent("PATCH", "/api/mcp/servers/odd"); body != `{"env":{"SECRET_O":"`+secretNew+`"}}` {
			t.Errorf("PATCH body %s: want only the edited secret", body)
		}
		s, _ := readFile(t, dir).Get("odd")
		if !slices.Equal(s.Command, oddCommand()) {
			t.Errorf("command on disk %q, want it untouched: %q", s.Command, oddCommand())
		}
	})

	t.Run("url with a reference", func(t *testing.T) {
		tb.t = t
		form := `form[data-form=edit-refd]`
		tb.do(chromedp.Click(chromedp.CSS(`article[data-server=refd] button[data-action=edit]`)))
		tb.waitJS("refd's edit form", sel(form, `e.querySelector('input[name=url]').value === '${MCP_URL}'`))
		tb.do(chromedp.SendKeys(chromedp.CSS(form+` input[data-secret="headers.X-Key"]`), secretRot),
			chromedp.Click(chromedp.CSS(form+` button[type=submit]`)))
		tb.waitJS("the form closed after the save", `!document.querySelector(`+js(form)+`)`)
		if body := tb.sent("PATCH", "/api/mcp/servers/refd"); body != `{"headers":{"X-Key":"`+secretRot+`"}}` {
			t.Errorf("PATCH body %s: want only the rotated header", body)
		}
		if s, _ := readFile(t, dir).Get("refd"); s.URL != "${MCP_URL}" || s.Headers["X-Key"] != secretRot {
			t.Errorf("refd on disk: url %q, header rotated %v", s.URL, s.Headers["X-Key"] == secretRot)
		}
		// A new one with a reference in its url, through the add form.
		add := `form[data-form=add]`
		tb.do(chromedp.Click(chromedp.CSS(`#add-server`)))
		tb.do(chromedp.SendKeys(chromedp.CSS(add+` input[name=name]`), "refd2"),
			chromedp.SetValue(chromedp.CSS(add+` select[name=type]`), "http"))
		tb.do(chromedp.Evaluate[chromedp.Void](`document.querySelector('`+add+` select[name=type]').dispatchEvent(new Event('change'))`),
			chromedp.SendKeys(chromedp.CSS(add+` input[name=url]`), "http://127.0.0.1:${PORT}/mcp"),
			chromedp.Click(chromedp.CSS(add+` button[type=submit]`)))
		tb.waitJS("refd2 added", `!!`+card("refd2")+` && !document.querySelector('`+add+`')`)
		if s, ok := readFile(t, dir).Get("refd2"); !ok || s.URL != "http://127.0.0.1:${PORT}/mcp" {
			t.Errorf("refd2 on disk: %v %q", ok, s.URL)
		}
		// An API refusal shows in the form, naming its field.
		tb.do(chromedp.Click(chromedp.CSS(`#add-server`)))
		tb.do(chromedp.SendKeys(chromedp.CSS(add+` input[name=name]`), "bad name!"),
			chromedp.SendKeys(chromedp.CSS(add+` textarea[data-arg]`), "x"),
			chromedp.Click(chromedp.CSS(add+` button[type=submit]`)))
		tb.waitJS("the refusal shown", sel(add+` [data-form-error]`, `/field name/.test(e.textContent)`))
		tb.expectProblem("status of 400 (Bad Request) http://" + url[len("http://"):] + "api/mcp/servers")
		tb.do(chromedp.Evaluate[chromedp.Void](`document.getElementById('add-form').replaceChildren()`))
	})

	t.Run("call a tool", func(t *testing.T) {
		tb.t = t
		tb.waitJS("ex ready", stateIs("ex", "ready"))
		tool := `article[data-server=ex] details[data-tool=ex__add]`
		tb.do(chromedp.Click(chromedp.CSS(`article[data-server=ex] details.tools > summary`)),
			chromedp.Click(chromedp.CSS(tool+` > summary`)),
			chromedp.SendKeys(chromedp.CSS(tool+` input[name=a]`), "2"),
			chromedp.SendKeys(chromedp.CSS(tool+` input[name=b]`), "40"),
			chromedp.Click(chromedp.CSS(tool+` button[type=submit]`)))
		tb.waitJS("the result 42", sel(tool+` .result pre.text`, `e.textContent === '42'`))
		if body := tb.sent("POST", "/api/mcp/tools/ex__add/call"); body != `{"arguments":{"a":2,"b":40}}` {
			t.Errorf("call body %s", body)
		}
	})

	t.Run("server text is text", func(t *testing.T) {
		tb.t = t
		if _, err := rt.CallTool(context.Background(), "ex__stderr", json.RawMessage(`{"text":`+js(xssPayload)+`}`)); err != nil {
			t.Fatal(err)
		}
		tb.waitJS("the payload in ex's stderr, as text", ``+card("ex")+`.querySelector('pre.stderr').textContent.includes(`+js(xssPayload)+`)`)
		tb.waitJS("the payload in hostile's tool description, as text",
			sel(`details[data-tool=hostile__show] .desc`, `e.textContent === `+js("shows "+xssPayload)))
		tool := `article[data-server=hostile] details[data-tool=hostile__show]`
		tb.do(chromedp.Click(chromedp.CSS(`article[data-server=hostile] details.tools > summary`)),
			chromedp.Click(chromedp.CSS(tool+` > summary`)),
			chromedp.Click(chromedp.CSS(tool+` button[type=submit]`)))
		tb.waitJS("the payload as a call result, as text", sel(tool+` .result pre.text`, `e.textContent === `+js(xssPayload)))
		if n := eval[int](tb, `document.querySelectorAll('img').length`); n != 0 {
			t.Errorf("%d img elements in the page", n)
		}
		if ran := eval[bool](tb, `window.__xss === 1`); ran {
			t.Error("the payload ran")
		}
	})

	t.Run("delete", func(t *testing.T) {
		tb.t = t
		tb.do(chromedp.Click(chromedp.CSS(`article[data-server=added] button[data-action=delete]`)),
			chromedp.Click(chromedp.CSS(`article[data-server=added] button[data-action=confirm-delete]`)))
		tb.waitJS("added gone", `!`+card("added"))
		if _, ok := readFile(t, dir).Get("added"); ok {
			t.Error("added still in the file")
		}
	})

	t.Run("catalog apply", func(t *testing.T) {
		tb.t = t
		tb.do(chromedp.Click(chromedp.CSS(`nav button[data-tab=catalog]`)))
		row := `#tab-catalog tr[data-entry="cursor/imported"]`
		tb.waitJS("the cursor entry", sel(row, "true"))
		tb.do(chromedp.SetValue(chromedp.CSS(`#tab-catalog select[name=source]`), "cursor"),
			chromedp.Click(chromedp.CSS(`#tab-catalog button[data-diff-button]`)))
		tb.waitJS("its diff: add", sel(`#tab-catalog tr[data-diff=imported] td.diff-add`, "true"))
		tb.do(chromedp.Click(chromedp.CSS(row+` button`)),
			chromedp.SendKeys(chromedp.CSS(row+` input[name=as]`), "fromcursor"),
			chromedp.Click(chromedp.CSS(row+` button[type=submit]`)))
		tb.waitJS("applied", sel(row+` .apply-result`, `e.textContent === 'added'`))
		tb.do(chromedp.Click(chromedp.CSS(`nav button[data-tab=servers]`)))
		tb.waitJS("fromcursor ready", stateIs("fromcursor", "ready"))
	})

	t.Run("actor tree", func(t *testing.T) {
		tb.t = t
		tb.do(chromedp.Click(chromedp.CSS(`nav button[data-tab=actors]`)))
		tb.waitJS("ex's session in the tree", sel(`#tab-actors li[data-actor="manager/ex/session"]`, "true"))
		tb.do(chromedp.Click(chromedp.CSS(`nav button[data-tab=servers]`)))
	})

	t.Run("no secret reaches the page", func(t *testing.T) {
		tb.t = t
		all := tb.everything()
		for _, s := range []string{secretA, secretB, secretHeader, secretToken, secretNew, secretOdd, secretRef, secretRot} {
			if strings.Contains(all, s) {
				t.Errorf("the page holds or received the planted secret %s", s[:18])
			}
		}
		if !strings.Contains(all, "****"+secretHeader[len(secretHeader)-4:]) {
			t.Error("the grep saw no mask: it read nothing the page got")
		}
		tb.noProblems()
	})
	t.Logf("browser tests took %v", time.Since(began))
}

func serverPID(t *testing.T, rt *runtime.Runtime, name string) int {
	t.Helper()
	for _, s := range rt.Servers() {
		if s.Name == name && s.PID > 0 {
			return s.PID
		}
	}
	t.Fatalf("%s has no process", name)
	return 0
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func readFile(t *testing.T, dir string) *config.File {
	t.Helper()
	f, err := config.Store{Dir: func() (string, error) { return dir, nil }}.Load()
	if err != nil {
		t.Fatal(err)
	}
	return f
}
