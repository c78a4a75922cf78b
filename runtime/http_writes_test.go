package runtime

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/openprogram/mcpvisor/status"
)

// TestHTTPWritesNeedJSONObject: every state-changing route refuses a
// request that is not a JSON object declared application/json (415 without
// the type, 400 without the object), so a bodiless POST (a redirected OAuth
// token request, a URL a server chose) or an HTML form changes nothing:
// same file, same process, no restart, no failure injected.
func TestHTTPWritesNeedJSONObject(t *testing.T) {
	rt := start(t, Options{Debug: true}, exampleServer("ex"))
	api := newAPI(t, rt)
	pid := api.waitState("ex", status.Ready).PID
	before := readConfig(t, rt)
	routes := []struct{ method, path string }{
		{"POST", "/api/mcp/servers"},
		{"PATCH", "/api/mcp/servers/ex"},
		{"DELETE", "/api/mcp/servers/ex"},
		{"POST", "/api/mcp/servers/ex/restart"},
		{"POST", "/api/mcp/reload"},
		{"POST", "/api/mcp/tools/ex__echo/call"},
		{"POST", "/api/mcp/prompts/ex__greet/get"},
		{"POST", "/debug/actors/kill"},
	}
	bad := []struct {
		name, ctype, body string
		code              int
		says              string
	}{
		{"bodiless", "", "", http.StatusUnsupportedMediaType, "application/json"},
		{"form", "application/x-www-form-urlencoded", "path=manager%2Fex&how=panic", http.StatusUnsupportedMediaType, "application/json"},
		{"multipart", "multipart/form-data; boundary=x", "--x--", http.StatusUnsupportedMediaType, "application/json"},
		{"text/plain", "text/plain", "{}", http.StatusUnsupportedMediaType, "application/json"},
		{"JSON type, no body", "application/json", "", http.StatusBadRequest, "empty"},
		{"JSON type, blank body", "application/json", " \n", http.StatusBadRequest, "empty"},
		{"array", "application/json", "[]", http.StatusBadRequest, "object"},
		{"string", "application/json", `"x"`, http.StatusBadRequest, "object"},
	}
	for _, r := range routes {
		for _, b := range bad {
			a := serve(t, api.h, apiRequest{method: r.method, path: r.path, ctype: b.ctype, body: b.body})
			if a.code != b.code {
				t.Errorf("%s %s %s: %d %s, want %d", b.name, r.method, r.path, a.code, a.body, b.code)
				continue
			}
			if e := a.apiError(t); !strings.Contains(e.Error, b.says) {
				t.Errorf("%s %s %s: error %q does not say %q", b.name, r.method, r.path, e.Error, b.says)
			}
		}
	}
	// The routes that take nothing take exactly {}.
	for _, path := range []string{"/api/mcp/servers/ex/restart", "/api/mcp/reload"} {
		a := serve(t, api.h, apiRequest{method: "POST", path: path, ctype: "application/json", body: `{"force": true}`})
		if e := a.want(t, http.StatusBadRequest).apiError(t); e.Field != "force" || !strings.Contains(e.Error, "{}") {
			t.Errorf("POST %s with a field: %+v, want field force and a word on {}", path, e)
		}
	}
	a := serve(t, api.h, apiRequest{method: "DELETE", path: "/api/mcp/servers/ex", ctype: "application/json", body: `{"x": 1}`})
	a.want(t, http.StatusBadRequest)

	if !bytes.Equal(before, readConfig(t, rt)) {
		t.Fatal("a refused write changed the config file")
	}
	if d := api.entry("ex"); d.State != status.Ready || d.PID != pid || d.Restarts != 0 {
		t.Fatalf("ex = %+v, want still ready on pid %d with no restart", d.ServerEntry, pid)
	}
	// And the same routes with {} go through.
	api.do("POST", "/api/mcp/servers/ex/restart", "{}").want(t, http.StatusOK)
	api.do("POST", "/api/mcp/reload", "{}").want(t, http.StatusOK)
	api.do("DELETE", "/api/mcp/servers/ex", "{}").want(t, http.StatusNoContent)
}
