package runtime

import (
	"io/fs"
	"net/http"
	"path"
	"strconv"

	"github.com/openprogram/mcpvisor/console"
)

// consoleCSP is the console's Content-Security-Policy: its scripts and
// styles only from its own files (no inline script or style, no eval),
// fetches and the event stream only to its own origin, images only its own
// or data: URIs, and no framing, <base> or form posts elsewhere.
const consoleCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// consoleType is the media type of a console file by its extension; ""
// for a kind the console does not serve.
func consoleType(name string) string {
	switch path.Ext(name) {
	case ".html":
		return "text/html; charset=utf-8"
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	}
	return ""
}

// ConsoleHandler returns the web console (package console): GET / is the
// page and GET /assets/FILE its scripts and stylesheet. A host mounts it
// beside Handler and DebugHandler, at "/" and "/assets/" of the same
// origin, since the page calls the API at /api/mcp/... and /debug/actors
// and opens /api/mcp/events:
//
//	GET    /                                 the page (index.html)
//	GET    /assets/{file}                    app.js, its modules, app.css; 404 for any other name
//
// It has the guards of Handler (the loopback Host check, cross-origin
// protection, the refusal of the runtime's own requests) and on every
// answer a strict Content-Security-Policy (no inline script or style, no
// other origin), X-Frame-Options DENY, nosniff, no referrer and
// Cache-Control no-store. It sets no cookie, and the page keeps nothing in
// the browser's storage: every secret it shows is the API's mask.
func (r *Runtime) ConsoleHandler() http.Handler {
	files := console.Files()
	mux := http.NewServeMux()
	r.handle(mux, "GET /{$}", ordinary, func(w http.ResponseWriter, req *http.Request) error {
		return serveConsoleFile(w, req, files, "index.html")
	})
	r.handle(mux, "GET /assets/{file}", ordinary, func(w http.ResponseWriter, req *http.Request) error {
		name := req.PathValue("file")
		if name == "index.html" || path.Base(name) != name {
			return &apiError{Status: http.StatusNotFound, Message: "no console asset " + quoteShort(name)}
		}
		return serveConsoleFile(w, req, files, name)
	})
	return consoleHeaders(r.guarded(mux))
}

// serveConsoleFile writes the embedded file name with its media type, or
// answers 404 when there is no such file of a served kind; HEAD gets the
// headers only.
func serveConsoleFile(w http.ResponseWriter, req *http.Request, files fs.FS, name string) error {
	ct := consoleType(name)
	data, err := fs.ReadFile(files, name)
	if ct == "" || err != nil {
		return &apiError{Status: http.StatusNotFound, Message: "no console asset " + quoteShort(name)}
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	w.WriteHeader(http.StatusOK)
	if req.Method != http.MethodHead {
		_, _ = w.Write(data)
	}
	return nil
}

// consoleHeaders puts the console's security headers on every answer of
// it, error answers of the guards included.
func consoleHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", consoleCSP)
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		next.ServeHTTP(w, req)
	})
}
