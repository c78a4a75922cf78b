package runtime

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/config"
)

// deadlineRecorder is a ResponseRecorder that takes a write deadline, as a
// real connection's writer does, and keeps it.
type deadlineRecorder struct {
	*httptest.ResponseRecorder
	write time.Time
}

func (d *deadlineRecorder) SetWriteDeadline(t time.Time) error { d.write = t; return nil }

// TestHTTPRouteDeadlines: each route sets a write deadline sized to what it
// may wait for: 30 s for reads, a tool call its server's
// max_call_seconds plus 30 s (progress may keep it running that long), a
// prompt get its server's timeout_seconds plus 30 s, a change that may restart a server the
// longest timeout_seconds there can be plus 30 s, a catalog apply 165 s
// (applyBudget).
func TestHTTPRouteDeadlines(t *testing.T) {
	srv := exampleServer("ex")
	srv.TimeoutSeconds = 7
	srv.MaxCallSeconds = 20
	rt := start(t, Options{}, srv)
	rt.waitReady(t, "ex")
	h := rt.Handler()
	tests := []struct {
		method, path, body string
		want               time.Duration
	}{
		{"GET", "/api/mcp/servers", "", routeTimeout},
		{"GET", "/healthz", "", routeTimeout},
		{"POST", "/api/mcp/tools/ex__echo/call", `{"arguments": {"text": "x"}}`, 20*time.Second + routeMargin},
		{"POST", "/api/mcp/tools/nope__x/call", `{}`, routeTimeout},
		{"POST", "/api/mcp/prompts/ex__greet/get", `{"arguments": {"name": "Ada"}}`, 7*time.Second + routeMargin},
		{"POST", "/api/mcp/servers/ex/restart", `{}`, config.MaxTimeoutSeconds*time.Second + routeMargin},
		{"PATCH", "/api/mcp/servers/ex", `{"timeout_seconds": 7}`, config.MaxTimeoutSeconds*time.Second + routeMargin},
		{"POST", "/api/mcp/catalog/apply", `{"entries": [{"source": "builtin", "name": "nope"}]}`, 165 * time.Second},
	}
	rt.awaitCatalog(t, "ex", "the greet prompt", func() bool { _, ok := rt.prompts.Get("ex__greet"); return ok })
	for _, tt := range tests {
		req := httptest.NewRequest(tt.method, tt.path, strings.NewReader(tt.body))
		req.Host = "127.0.0.1:7077"
		if tt.body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		rec := &deadlineRecorder{ResponseRecorder: httptest.NewRecorder()}
		before := time.Now()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Errorf("%s %s: %d %s", tt.method, tt.path, rec.Code, rec.Body)
		}
		// The deadline is set before the route runs: from before+want
		// to at most a moment later.
		if got := rec.write.Sub(before); got < tt.want || got > tt.want+5*time.Second {
			t.Errorf("%s %s: write deadline in %v, want %v", tt.method, tt.path, got, tt.want)
		}
	}
	// A writer without deadlines is served all the same.
	serve(t, h, jsonRequest("POST", "/api/mcp/tools/ex__echo/call", `{"arguments": {"text": "x"}}`)).want(t, http.StatusOK)
}
