package main

import (
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/openprogram/mcpvisor/runtime"
)

// managementHandler is what `demo run` serves on its listener: the web
// console at / and /assets/, the runtime's debug routes under /debug/ and
// its management API everywhere else. It picks by prefix rather than
// through an http.ServeMux, whose own redirect of a path not in canonical
// form would answer in text: the three handlers answer every request,
// errors included, in JSON (the console's files aside).
func managementHandler(rt *runtime.Runtime) http.Handler {
	api, debug, console := rt.Handler(), rt.DebugHandler(), rt.ConsoleHandler()
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		switch p := req.URL.Path; {
		case strings.HasPrefix(p, "/debug/"):
			debug.ServeHTTP(w, req)
		case p == "/" || strings.HasPrefix(p, "/assets/"):
			console.ServeHTTP(w, req)
		default:
			api.ServeHTTP(w, req)
		}
	})
}

// apiTimeouts are the connection timeouts of the management API's server;
// a zero field takes its default. The routes of runtime.Handler set their
// own write deadline on top (30 s, a tool call its server's
// max_call_seconds plus 30 s, a catalog apply 165 s; the event stream each
// frame 10 s), so Write
// only bounds what no route answers (the mux's own 404s and redirects) and
// does not cut GET /api/mcp/events.
type apiTimeouts struct {
	// ReadHeader bounds reading a request's headers. Default 5s.
	ReadHeader time.Duration
	// Read bounds reading a whole request, body included (at most 1 MiB).
	// Default 30s.
	Read time.Duration
	// Write is the write deadline of an answer whose route sets none.
	// Default 30s.
	Write time.Duration
	// Idle is how long a kept-alive connection may wait for its next
	// request. Default 60s.
	Idle time.Duration
}

func (t apiTimeouts) withDefaults() apiTimeouts {
	orDefault := func(d *time.Duration, def time.Duration) {
		if *d <= 0 {
			*d = def
		}
	}
	orDefault(&t.ReadHeader, 5*time.Second)
	orDefault(&t.Read, 30*time.Second)
	orDefault(&t.Write, 30*time.Second)
	orDefault(&t.Idle, 60*time.Second)
	return t
}

// newAPIServer is the http.Server that `demo run` serves the management
// API with: a client that sends its headers or body slowly, or holds an
// idle connection, is cut off.
func newAPIServer(h http.Handler, logger *slog.Logger, t apiTimeouts) *http.Server {
	t = t.withDefaults()
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: t.ReadHeader,
		ReadTimeout:       t.Read,
		WriteTimeout:      t.Write,
		IdleTimeout:       t.Idle,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
}
