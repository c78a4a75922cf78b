package runtime

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/tools"
)

// TestHTTPHostCheck: only loopback Host headers are served, whatever the
// port, so DNS rebinding cannot reach the API from a web page.
func TestHTTPHostCheck(t *testing.T) {
	rt := start(t, Options{})
	h := rt.Handler()
	tests := []struct {
		host string
		ok   bool
	}{
		{"127.0.0.1:7077", true},
		{"127.0.0.1", true},
		{"127.9.8.7:1", true},
		{"localhost", true},
		{"LocalHost:80", true},
		{"localhost.:7077", true},
		{"[::1]:7077", true},
		{"[::1]", true},
		{"::1", true},
		{"[::ffff:127.0.0.1]:7077", true},
		{"", true},
		{"example.com", false},
		{"example.com:7077", false},
		{"localhost.example.com", false},
		{"127.0.0.1.nip.io:7077", false},
		{"evil.localhost:7077", false},
		{"10.0.0.1:7077", false},
		{"0.0.0.0:7077", false},
		{"[::2]:7077", false},
		{"[fe80::1%25eth0]:7077", false},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			a := serve(t, h, apiRequest{method: "GET", path: "/healthz", host: tt.host, noHost: tt.host == ""})
			switch {
			case tt.ok && a.code != http.StatusOK:
				t.Errorf("Host %q: %d %s, want 200", tt.host, a.code, a.body)
			case !tt.ok && a.code != http.StatusForbidden:
				t.Errorf("Host %q: %d %s, want 403", tt.host, a.code, a.body)
			case !tt.ok && !strings.Contains(a.apiError(t).Error, "not allowed"):
				t.Errorf("Host %q: error %s does not say why", tt.host, a.body)
			}
		})
	}
	// A refused write changes nothing.
	before := readConfig(t, rt)
	a := serve(t, h, apiRequest{method: "POST", path: "/api/mcp/servers", host: "attacker.example:7077", ctype: "application/json",
		body: `{"name": "x", "type": "local", "command": ["true"]}`})
	a.want(t, http.StatusForbidden)
	if !bytes.Equal(before, readConfig(t, rt)) || len(rt.Servers()) != 0 {
		t.Fatal("a request with a foreign Host changed the config")
	}
}

// TestHTTPCrossOriginWrites: a browser page on another origin cannot make
// a write, even one that needs nothing but {} (restart, reload, a call).
func TestHTTPCrossOriginWrites(t *testing.T) {
	rt := start(t, Options{}, exampleServer("ex"))
	rt.waitSettled(t, "ex")
	h := rt.Handler()
	pid := rt.Servers()[0].PID
	for _, path := range []string{"/api/mcp/servers/ex/restart", "/api/mcp/reload", "/api/mcp/tools/ex__image/call"} {
		for name, hdr := range map[string]map[string]string{
			"sec-fetch-site": {"Sec-Fetch-Site": "cross-site", "Origin": "https://attacker.example"},
			"origin only":    {"Origin": "https://attacker.example"},
			"other port":     {"Sec-Fetch-Site": "same-site", "Origin": "http://127.0.0.1:3000"},
		} {
			a := serve(t, h, apiRequest{method: "POST", path: path, header: hdr, ctype: "application/json", body: "{}"})
			if a.code != http.StatusForbidden {
				t.Errorf("%s from %s: %d %s, want 403", path, name, a.code, a.body)
			}
		}
	}
	if got := rt.Servers()[0]; got.PID != pid || got.Restarts != 0 {
		t.Fatalf("a refused cross-origin restart restarted the server: %+v", got)
	}
	// The same requests without browser headers (curl) and from the API's
	// own origin go through.
	serve(t, h, jsonRequest("POST", "/api/mcp/tools/ex__image/call", "")).want(t, http.StatusOK)
	serve(t, h, apiRequest{method: "POST", path: "/api/mcp/tools/ex__image/call", ctype: "application/json", body: "{}",
		header: map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": "http://127.0.0.1:7077"}}).want(t, http.StatusOK)
	// Reads are not writes: a cross-origin GET is answered (a browser
	// still keeps the answer from the page, as no CORS header allows it).
	a := serve(t, h, apiRequest{method: "GET", path: "/api/mcp/servers",
		header: map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://attacker.example"}})
	a.want(t, http.StatusOK)
	if a.header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatal("the API allows cross-origin reads")
	}
}

// TestHTTPUnmatchedRoutes: wrong methods get 405 with Allow, unknown paths
// 404, both as JSON errors.
func TestHTTPUnmatchedRoutes(t *testing.T) {
	rt := start(t, Options{})
	h := rt.Handler()
	tests := []struct {
		method, path string
		code         int
		allow        []string
	}{
		{"PUT", "/api/mcp/servers", http.StatusMethodNotAllowed, []string{"GET", "POST"}},
		{"DELETE", "/api/mcp/servers", http.StatusMethodNotAllowed, []string{"GET", "POST"}},
		{"POST", "/api/mcp/servers/ex", http.StatusMethodNotAllowed, []string{"GET", "PATCH", "DELETE"}},
		{"GET", "/api/mcp/servers/ex/restart", http.StatusMethodNotAllowed, []string{"POST"}},
		{"GET", "/api/mcp/reload", http.StatusMethodNotAllowed, []string{"POST"}},
		{"POST", "/healthz", http.StatusMethodNotAllowed, []string{"GET"}},
		{"DELETE", "/api/mcp/tools", http.StatusMethodNotAllowed, []string{"GET"}},
		{"GET", "/api/mcp/tools/ex__echo/call", http.StatusMethodNotAllowed, []string{"POST"}},
		{"GET", "/", http.StatusNotFound, nil},
		{"GET", "/api/mcp", http.StatusNotFound, nil},
		{"GET", "/api/mcp/servers/", http.StatusNotFound, nil},
		{"GET", "/api/mcp/servers/ex/tools", http.StatusNotFound, nil},
		{"POST", "/api/mcp/tools/ex__echo", http.StatusNotFound, nil},
		{"GET", "/debug/pprof/", http.StatusNotFound, nil},
		{"GET", "/debug/actors", http.StatusNotFound, nil}, // DebugHandler's
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			a := serve(t, h, apiRequest{method: tt.method, path: tt.path})
			a.want(t, tt.code)
			allow := a.header.Get("Allow")
			for _, m := range tt.allow {
				if !strings.Contains(allow, m) {
					t.Errorf("Allow %q lacks %s", allow, m)
				}
			}
			if msg := a.apiError(t).Error; !strings.Contains(msg, tt.path) {
				t.Errorf("error %q does not name the path", msg)
			}
		})
	}
}

// TestHTTPErrorStatus: each error of the runtime, wrapped as the runtime
// wraps it, has its status; the message is the error's own text.
func TestHTTPErrorStatus(t *testing.T) {
	tests := []struct {
		err   error
		code  int
		field string
	}{
		{fmt.Errorf("%w: %q", ErrUnknownServer, "x"), http.StatusNotFound, ""},
		{fmt.Errorf("calling %q: %w", "x__y", tools.ErrUnknownTool), http.StatusNotFound, ""},
		{fmt.Errorf("%w: %q", ErrServerExists, "x"), http.StatusConflict, ""},
		{ErrSuperseded, http.StatusConflict, ""},
		{fmt.Errorf("saving: %w", &config.ParseError{Path: "/p", Err: errors.New("bad")}), http.StatusConflict, ""},
		{&config.FieldError{Server: "x", Field: "command", Message: "is required"}, http.StatusBadRequest, "command"},
		{&config.FieldError{Message: "body is not JSON"}, http.StatusBadRequest, ""},
		{fmt.Errorf("%w: boom", ErrRestartFailed), http.StatusBadGateway, ""},
		{fmt.Errorf("calling: %w", tools.ErrSessionClosed), http.StatusBadGateway, ""},
		{fmt.Errorf("calling: %w", tools.ErrNotReady), http.StatusServiceUnavailable, ""},
		{fmt.Errorf("calling: %w", tools.ErrTimeout), http.StatusGatewayTimeout, ""},
		{context.DeadlineExceeded, http.StatusGatewayTimeout, ""},
		{ErrShuttingDown, http.StatusServiceUnavailable, ""},
		{&http.MaxBytesError{Limit: maxBodyBytes}, http.StatusRequestEntityTooLarge, ""},
		{errors.New("something else"), http.StatusInternalServerError, ""},
	}
	for _, tt := range tests {
		e := toAPIError(tt.err)
		if e.Status != tt.code || e.Field != tt.field || e.Message == "" {
			t.Errorf("%v: %d field %q, want %d field %q", tt.err, e.Status, e.Field, tt.code, tt.field)
		}
		if tt.code != http.StatusRequestEntityTooLarge && !strings.Contains(e.Message, tt.err.Error()) {
			t.Errorf("%v: message %q drops the error's text", tt.err, e.Message)
		}
	}
	if e := toAPIError(&config.ParseError{Path: "/p", Err: errors.New("bad")}); !strings.Contains(e.Message, "fix it by hand") {
		t.Errorf("unparsable message %q does not say what to do", e.Message)
	}
}

func TestHTTPLoopbackHost(t *testing.T) {
	// The table of TestHTTPHostCheck through the handler; here the parser
	// alone, for inputs no real request carries.
	for host, want := range map[string]bool{
		"127.0.0.1:notaport": true, // the port does not matter
		"[127.0.0.1]":        true,
		"localhost:":         true,
		"1.2.3.4":            false,
		"[":                  false,
		"localhostx":         false,
		"::ffff:10.0.0.1":    false,
	} {
		if got := loopbackHost(host); got != want {
			t.Errorf("loopbackHost(%q) = %v, want %v", host, got, want)
		}
	}
}
