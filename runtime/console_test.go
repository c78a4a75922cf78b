package runtime

import (
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/openprogram/mcpvisor/console"
	"github.com/openprogram/mcpvisor/internal/mcpconn"
)

// consoleGet sends one request to the console handler from a loopback
// Host and returns the answer and its body.
func consoleGet(t *testing.T, h http.Handler, method, path string, edit func(*http.Request)) (*http.Response, string) {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	req.Host = "127.0.0.1:7077"
	if edit != nil {
		edit(req)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	res := rec.Result()
	body, _ := io.ReadAll(res.Body)
	return res, string(body)
}

// wantConsoleHeaders checks the security headers every console answer
// carries, and that none sets a cookie.
func wantConsoleHeaders(t *testing.T, what string, res *http.Response) {
	t.Helper()
	for k, want := range map[string]string{
		"Content-Security-Policy": consoleCSP,
		"X-Frame-Options":         "DENY",
		"X-Content-Type-Options":  "nosniff",
		"Referrer-Policy":         "no-referrer",
		"Cache-Control":           "no-store",
	} {
		if got := res.Header.Get(k); got != want {
			t.Errorf("%s: %s = %q, want %q", what, k, got, want)
		}
	}
	if c := res.Header.Values("Set-Cookie"); len(c) > 0 {
		t.Errorf("%s: sets cookies %q", what, c)
	}
}

func TestConsoleServesEmbeddedFiles(t *testing.T) {
	rt := start(t, Options{})
	h := rt.ConsoleHandler()
	files := console.Files()
	res, body := consoleGet(t, h, http.MethodGet, "/", nil)
	wantConsoleHeaders(t, "GET /", res)
	index, _ := fs.ReadFile(files, "index.html")
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/html; charset=utf-8" || body != string(index) {
		t.Fatalf("GET /: %d %q, body is the embedded index.html: %v", res.StatusCode, res.Header.Get("Content-Type"), body == string(index))
	}
	names, err := fs.Glob(files, "*")
	if err != nil {
		t.Fatal(err)
	}
	var served int
	for _, name := range names {
		if name == "index.html" || strings.HasSuffix(name, ".go") {
			continue
		}
		want, _ := fs.ReadFile(files, name)
		res, body := consoleGet(t, h, http.MethodGet, "/assets/"+name, nil)
		wantConsoleHeaders(t, name, res)
		ct := map[string]string{".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}[name[strings.LastIndex(name, "."):]]
		if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != ct || body != string(want) {
			t.Errorf("GET /assets/%s: %d %q, the embedded file: %v", name, res.StatusCode, res.Header.Get("Content-Type"), body == string(want))
		}
		served++
	}
	if served < 3 {
		t.Fatalf("only %d assets embedded: %v", served, names)
	}
	// Every asset the page names is served.
	for _, m := range regexp.MustCompile(`(?:src|href)="(/assets/[^"]+)"`).FindAllStringSubmatch(string(index), -1) {
		if res, _ := consoleGet(t, h, http.MethodGet, m[1], nil); res.StatusCode != http.StatusOK {
			t.Errorf("index.html names %s, answered %d", m[1], res.StatusCode)
		}
	}
	// HEAD answers as GET does, without a body.
	if res, body := consoleGet(t, h, http.MethodHead, "/", nil); res.StatusCode != http.StatusOK || body != "" {
		t.Errorf("HEAD /: %d, body %q", res.StatusCode, body)
	}
}

func TestConsoleUnknownPathsAndMethods(t *testing.T) {
	rt := start(t, Options{})
	h := rt.ConsoleHandler()
	for _, tc := range []struct {
		method, path string
		code         int
	}{
		{http.MethodGet, "/assets/nope.js", http.StatusNotFound},
		{http.MethodGet, "/assets/index.html", http.StatusNotFound}, // the page is at / only
		{http.MethodGet, "/assets/console.go", http.StatusNotFound},
		{http.MethodGet, "/assets/", http.StatusNotFound},
		{http.MethodGet, "/assets/..%2fconsole.go", http.StatusNotFound},
		{http.MethodGet, "/index.html", http.StatusNotFound},
		{http.MethodPost, "/", http.StatusMethodNotAllowed},
		{http.MethodDelete, "/assets/app.js", http.StatusMethodNotAllowed},
	} {
		res, body := consoleGet(t, h, tc.method, tc.path, nil)
		wantConsoleHeaders(t, tc.method+" "+tc.path, res)
		if res.StatusCode != tc.code || !strings.Contains(body, `"error"`) {
			t.Errorf("%s %s: %d %s, want %d with a JSON error", tc.method, tc.path, res.StatusCode, body, tc.code)
		}
	}
}

func TestConsoleGuards(t *testing.T) {
	rt := start(t, Options{})
	h := rt.ConsoleHandler()
	for name, edit := range map[string]func(*http.Request){
		"rebinding Host": func(r *http.Request) { r.Host = "evil.example:7077" },
		"runtime's mark": func(r *http.Request) { r.Header.Set(mcpconn.RequestMarkHeader, "1") },
	} {
		res, body := consoleGet(t, h, http.MethodGet, "/", edit)
		wantConsoleHeaders(t, name, res)
		if res.StatusCode != http.StatusForbidden || strings.Contains(body, "<html") {
			t.Errorf("%s: %d %q, want 403 without the page", name, res.StatusCode, body)
		}
	}
	// localhost and an IPv6 loopback are the page's own.
	for _, host := range []string{"localhost:7077", "[::1]:7077"} {
		if res, _ := consoleGet(t, h, http.MethodGet, "/", func(r *http.Request) { r.Host = host }); res.StatusCode != http.StatusOK {
			t.Errorf("Host %s: %d, want 200", host, res.StatusCode)
		}
	}
}

// TestConsoleFilesAreSafe reads the embedded files for what the CSP
// forbids and what W2/W3 rule out: inline script or style, HTML built from
// strings, the browser's storage, another origin.
func TestConsoleFilesAreSafe(t *testing.T) {
	files := console.Files()
	names, _ := fs.Glob(files, "*")
	forbidden := []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function",
		"localStorage", "sessionStorage", "indexedDB", "document.cookie", "caches.", "http://", "https://cdn", "//unpkg", "//cdn",
		// A style attribute (the CSP's refusal would break the page; the
		// CSSOM, el.style.x =, is allowed), a document from a string, a
		// frame, a script URL, a window the page controls.
		"setAttribute('style'", `setAttribute("style"`, ".srcdoc", "setAttribute('srcdoc'", "<iframe", "'iframe'", "javascript:", "window.open"}
	// Attributes passed to h() (dom.js refuses them too): links only by httpLink.
	hKeys := regexp.MustCompile(`(?i)[{,]\s*['"]?(style|srcdoc|href)['"]?\s*:`)
	var total int
	for _, name := range names {
		data, _ := fs.ReadFile(files, name)
		total += len(data)
		text := string(data)
		for _, bad := range forbidden {
			if strings.Contains(text, bad) {
				t.Errorf("%s holds %q", name, bad)
			}
		}
		if strings.HasSuffix(name, ".js") {
			for _, m := range hKeys.FindAllString(text, -1) {
				t.Errorf("%s passes %q to an element", name, m)
			}
		}
	}
	index, _ := fs.ReadFile(files, "index.html")
	for _, tag := range regexp.MustCompile(`<script[^>]*>[^<]*`).FindAllString(string(index), -1) {
		if !strings.Contains(tag, ` src="/assets/`) || !strings.HasSuffix(tag, ">") {
			t.Errorf("index.html has an inline script: %q", tag)
		}
	}
	for _, bad := range []*regexp.Regexp{regexp.MustCompile(`<style`), regexp.MustCompile(`\sstyle=`), regexp.MustCompile(`\son[a-z]+=`)} {
		if bad.Match(index) {
			t.Errorf("index.html has inline script or style: %v", bad)
		}
	}
	if total > 64<<10 {
		t.Errorf("the console is %d bytes; keep it under 64 KiB", total)
	}
}
