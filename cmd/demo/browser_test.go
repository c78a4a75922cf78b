package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/openprogram/mcpvisor/internal/testutil"
)

// chromiumPath is Debian's Chromium, which `make test` installs when it
// is missing (scripts/chromium.sh).
const chromiumPath = "/usr/bin/chromium"

// browserWait bounds one wait of a browser test for the page to show
// something.
const browserWait = 20 * time.Second

// newBrowser starts headless Chromium for the test and returns its
// context; it is closed, and its processes gone, when the test ends. A
// Chromium that cannot start fails the test saying why: the console's
// tests are never skipped.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Fatalf("Chromium is not installed at %s (run scripts/chromium.sh, as `make test` does): %v", chromiumPath, err)
	}
	var out strings.Builder
	var outMu sync.Mutex
	allocCtx, allocCancel := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chromiumPath),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("password-store", "basic"),
		chromedp.UserDataDir(t.TempDir()),
		// The marker makes a Chromium left behind a leftover TestMain reports.
		chromedp.Env(testutil.MarkerEnv+"="+marker),
		chromedp.CombinedOutput(writerFunc(func(p []byte) {
			outMu.Lock()
			defer outMu.Unlock()
			if out.Len() < 16<<10 {
				out.Write(p)
			}
		})),
	)
	ctx, cancel := chromedp.NewContext(allocCtx)
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		cancel()
		allocCancel()
		outMu.Lock()
		defer outMu.Unlock()
		t.Fatalf("Chromium (%s) cannot start: %v\n%s", chromiumPath, err, out.String())
	}
	t.Cleanup(func() {
		cctx, ccancel := context.WithTimeout(ctx, 10*time.Second)
		defer ccancel()
		if err := chromedp.Cancel(cctx); err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("closing Chromium: %v", err)
		}
		cancel()
		allocCancel()
	})
	return ctx
}

type writerFunc func(p []byte)

func (f writerFunc) Write(p []byte) (int, error) { f(p); return len(p), nil }

// tab is one page of the browser, with what it received and any script
// error or CSP violation it reported.
type tab struct {
	t   *testing.T
	ctx context.Context

	mu        sync.Mutex
	responses []network.RequestID // finished loads, bodies fetched on demand
	answered  map[network.RequestID]answer
	streamed  []string          // the event stream's messages
	requests  map[string]string // "METHOD path" → the last body sent
	sentURLs  []string          // "METHOD path" of every request
	problems  []string          // exceptions, console errors, CSP reports
}

// answer is what the tab knows of a response before its body.
type answer struct {
	status int64
	mime   string
	url    string
}

// openTab opens a tab on the browser and loads url; the tab closes when
// the test ends.
func openTab(t *testing.T, browser context.Context, url string) *tab {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browser)
	t.Cleanup(cancel)
	tb := &tab{t: t, ctx: ctx, requests: map[string]string{}, answered: map[network.RequestID]answer{}}
	if err := chromedp.Listen(ctx, tb.event); err != nil {
		t.Fatalf("listening to the tab: %v", err)
	}
	tb.do(chromedp.EmulateViewport(1200, 900), chromedp.Navigate(url))
	return tb
}

// followNew clicks the link selector finds in tb, which opens in a new
// tab (target=_blank), and returns that tab, closed when the test ends.
// The tab is attached after it began loading: what it received before is
// not in its record, so check what it holds.
func (tb *tab) followNew(selector string) *tab {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, browserWait)
	defer cancel()
	opened := chromedp.WaitNewTarget(ctx, func(i *target.Info) bool { return i.Type == "page" })
	tb.do(chromedp.Click(chromedp.CSS(selector)))
	var id target.ID
	select {
	case id = <-opened:
	case <-ctx.Done():
		tb.t.Fatalf("clicking %s opened no tab in %v%s", selector, browserWait, tb.problemList())
	}
	tctx, tcancel := chromedp.NewContext(tb.ctx, chromedp.WithTargetID(id))
	tb.t.Cleanup(tcancel)
	nt := &tab{t: tb.t, ctx: tctx, requests: map[string]string{}, answered: map[network.RequestID]answer{}}
	if err := chromedp.Listen(tctx, nt.event); err != nil {
		tb.t.Fatalf("listening to the new tab: %v", err)
	}
	nt.do() // attaches
	return nt
}

// event records what the tab received; it runs on the tab's reading
// goroutine, so it only stores.
func (tb *tab) event(ev any) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	switch e := ev.(type) {
	case *network.EventLoadingFinished:
		tb.responses = append(tb.responses, e.RequestID)
	case *network.EventResponseReceived:
		if e.Response != nil {
			tb.answered[e.RequestID] = answer{status: e.Response.Status, mime: e.Response.MimeType, url: pathOf(e.Response.URL)}
		}
	case *network.EventEventSourceMessageReceived:
		tb.streamed = append(tb.streamed, e.Data)
	case *network.EventRequestWillBeSent:
		if e.Request != nil {
			tb.sentURLs = append(tb.sentURLs, e.Request.Method+" "+pathOf(e.Request.URL))
		}
		if e.Request != nil && e.Request.HasPostData {
			var body strings.Builder
			for _, p := range e.Request.PostDataEntries {
				body.Write(p.Bytes)
			}
			tb.requests[e.Request.Method+" "+pathOf(e.Request.URL)] = body.String()
		}
	case *cdpruntime.EventExceptionThrown:
		tb.problems = append(tb.problems, fmt.Sprintf("exception: %+v", e.ExceptionDetails))
	case *log.EventEntryAdded:
		if e.Entry != nil && (e.Entry.Level == log.EntryLevelError || strings.Contains(e.Entry.Text, "Content Security Policy")) {
			tb.problems = append(tb.problems, fmt.Sprintf("console %s: %s %s", e.Entry.Level, e.Entry.Text, e.Entry.URL))
		}
	}
}

func pathOf(url string) string {
	if i := strings.Index(url, "//"); i >= 0 {
		if j := strings.Index(url[i+2:], "/"); j >= 0 {
			return url[i+2+j:]
		}
	}
	return url
}

// do runs actions on the tab, failing the test on an error.
func (tb *tab) do(actions ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, browserWait)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		tb.t.Fatalf("browser: %v%s", err, tb.problemList())
	}
}

// waitJS waits until the JavaScript expression is truthy in the page.
func (tb *tab) waitJS(what, expr string) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, browserWait+time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(browserWait))); err != nil {
		page, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('main').innerText`))
		tb.t.Fatalf("waiting for %s (%s): %v%s\npage:\n%s", what, expr, err, tb.problemList(), page)
	}
}

// eval evaluates expr in the page and decodes its value into T.
func eval[T any](tb *tab, expr string) T {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, browserWait)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		tb.t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// sent is the body of the last request the page sent with method to path.
func (tb *tab) sent(method, path string) string {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return tb.requests[method+" "+path]
}

// urls is every request the page sent, as sentURLs holds them.
func (tb *tab) urls() []string {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return append([]string(nil), tb.sentURLs...)
}

func (tb *tab) problemList() string {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	if len(tb.problems) == 0 {
		return ""
	}
	return "\npage problems:\n  " + strings.Join(tb.problems, "\n  ")
}

// everything is all the page holds and received: what it holds, the
// bodies of its answers and the event stream's messages.
func (tb *tab) everything() string {
	tb.t.Helper()
	var b strings.Builder
	b.WriteString(tb.held())
	tb.mu.Lock()
	ids := append([]network.RequestID(nil), tb.responses...)
	b.WriteString(strings.Join(tb.streamed, "\n"))
	tb.mu.Unlock()
	// A body that cannot be read is a failure, but for those that have
	// none: a 204, and the event stream (its messages are in streamed).
	fetched, unread := 0, 0
	var failed []string
	for _, id := range ids {
		ctx, cancel := context.WithTimeout(tb.ctx, browserWait)
		res, err := chromedp.Call(ctx, network.GetResponseBody, network.GetResponseBodyParams{RequestID: id})
		cancel()
		if err == nil {
			b.Write(res.Body)
			fetched++
			continue
		}
		unread++
		tb.mu.Lock()
		a := tb.answered[id]
		tb.mu.Unlock()
		if a.status != 204 && a.mime != "text/event-stream" {
			failed = append(failed, fmt.Sprintf("%d %s %s: %v", a.status, a.mime, a.url, err))
		}
	}
	tb.t.Logf("the grep read %d answer bodies; %d had none to read (204s and the event stream: %d; others: %d)", fetched, unread, unread-len(failed), len(failed))
	if len(failed) > 0 || fetched == 0 {
		tb.t.Fatalf("%d response bodies of the page could not be read (%d loads):\n  %s", len(failed), len(ids), strings.Join(failed, "\n  "))
	}
	return b.String()
}

// held is what the page holds: its DOM (with the values of inputs), and
// its storage; the browser holding any cookie fails the test.
func (tb *tab) held() string {
	tb.t.Helper()
	var b strings.Builder
	b.WriteString(eval[string](tb, `document.documentElement.outerHTML`))
	b.WriteString(eval[string](tb, `JSON.stringify([...document.querySelectorAll('input, textarea, select')].map((e) => e.value))`))
	b.WriteString(eval[string](tb, `JSON.stringify({cookie: document.cookie, local: Object.entries(localStorage), session: Object.entries(sessionStorage)})`))
	b.WriteString(eval[string](tb, `indexedDB.databases().then((d) => JSON.stringify(d))`))
	cookies, err := chromedp.Call(tb.ctx, network.GetCookies, network.GetCookiesParams{})
	if err != nil {
		tb.t.Fatalf("reading cookies: %v", err)
	}
	if len(cookies.Cookies) > 0 {
		tb.t.Errorf("the browser holds cookies: %v", cookies.Cookies)
	}
	return b.String()
}

// expectProblem drops the problems holding s: what the test provoked
// (the console logs every error answer a fetch got).
func (tb *tab) expectProblem(s string) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	kept := tb.problems[:0]
	for _, p := range tb.problems {
		if !strings.Contains(p, s) {
			kept = append(kept, p)
		}
	}
	tb.problems = kept
}

// noProblems fails the test if the page threw, logged an error or had
// something refused by its CSP.
func (tb *tab) noProblems() {
	tb.t.Helper()
	if p := tb.problemList(); p != "" {
		tb.t.Errorf("the page reported problems:%s", p)
	}
}

// js quotes s as a JavaScript string literal.
func js(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
