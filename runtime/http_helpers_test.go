package runtime

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/status"
)

// Helpers of the management API tests: requests through the handler with
// the checks every answer must pass, and the config file on disk.

// apiAnswer is one answer of the management API.
type apiAnswer struct {
	code   int
	header http.Header
	body   []byte
}

// apiErrorBody is the JSON of an error answer.
type apiErrorBody struct {
	Error string `json:"error"`
	Field string `json:"field"`
}

// apiRequest describes one request to the handler.
type apiRequest struct {
	method, path string
	ctype        string // Content-Type; "" sends none
	body         string
	host         string // default 127.0.0.1:7077
	noHost       bool   // send no Host at all (HTTP/1.0)
	header       map[string]string
}

// serve runs one request through h and checks what every answer must
// carry: JSON with nosniff, a JSON body (none for 204), and on an error a
// non-empty "error" and nothing but "error" and "field".
func serve(t *testing.T, h http.Handler, r apiRequest) apiAnswer {
	t.Helper()
	var body *strings.Reader
	if r.body != "" {
		body = strings.NewReader(r.body)
	} else {
		body = strings.NewReader("")
	}
	req := httptest.NewRequest(r.method, r.path, body)
	req.Host = "127.0.0.1:7077"
	if r.host != "" || r.noHost {
		req.Host = r.host
	}
	if r.ctype != "" {
		req.Header.Set("Content-Type", r.ctype)
	}
	for k, v := range r.header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	a := apiAnswer{code: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}
	if ct := a.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s %s: Content-Type %q, want application/json", r.method, r.path, ct)
	}
	if v := a.header.Get("X-Content-Type-Options"); v != "nosniff" {
		t.Errorf("%s %s: X-Content-Type-Options %q, want nosniff", r.method, r.path, v)
	}
	if a.code == http.StatusNoContent {
		if len(a.body) != 0 {
			t.Errorf("%s %s: 204 with a body: %s", r.method, r.path, a.body)
		}
		return a
	}
	if !json.Valid(a.body) {
		t.Errorf("%s %s: body is not JSON: %q", r.method, r.path, a.body)
	}
	if a.code >= 400 {
		var fields map[string]any
		_ = json.Unmarshal(a.body, &fields)
		msg, _ := fields["error"].(string)
		delete(fields, "error")
		delete(fields, "field")
		if msg == "" || len(fields) != 0 {
			t.Errorf("%s %s: error answer %s, want {\"error\": \"...\", \"field\": ...}", r.method, r.path, a.body)
		}
	}
	return a
}

// decode unmarshals the answer's body into v, failing the test if it does
// not fit.
func (a apiAnswer) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(a.body, v); err != nil {
		t.Fatalf("decoding %s: %v", a.body, err)
	}
}

func (a apiAnswer) apiError(t *testing.T) apiErrorBody {
	t.Helper()
	var e apiErrorBody
	a.decode(t, &e)
	return e
}

// want fails the test unless the answer has the given status.
func (a apiAnswer) want(t *testing.T, code int) apiAnswer {
	t.Helper()
	if a.code != code {
		t.Fatalf("status %d, want %d; body %s", a.code, code, a.body)
	}
	return a
}

// apiClient runs requests against one runtime's handler.
type apiClient struct {
	t  *testing.T
	h  http.Handler
	rt *testRuntime
}

func newAPI(t *testing.T, rt *testRuntime) *apiClient {
	return &apiClient{t: t, h: mounted(rt.Runtime), rt: rt}
}

// mounted is Handler with DebugHandler mounted at /debug/, as a host
// mounts them on one mux.
func mounted(rt *Runtime) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/debug/", rt.DebugHandler())
	mux.Handle("/", rt.Handler())
	return mux
}

// do sends body as application/json; a write (POST, PATCH, DELETE) with
// no body sends {}, as every state-changing route requires.
func (c *apiClient) do(method, path, body string) apiAnswer {
	c.t.Helper()
	return serve(c.t, c.h, jsonRequest(method, path, body))
}

// jsonRequest is a request with body as application/json; a write with no
// body carries {}.
func jsonRequest(method, path, body string) apiRequest {
	r := apiRequest{method: method, path: path, body: body}
	if body == "" && method != http.MethodGet {
		r.body = "{}"
	}
	if r.body != "" {
		r.ctype = "application/json"
	}
	return r
}

// entry GETs one server.
func (c *apiClient) entry(name string) ServerDetail {
	c.t.Helper()
	var d ServerDetail
	c.do("GET", "/api/mcp/servers/"+name, "").want(c.t, http.StatusOK).decode(c.t, &d)
	return d
}

// names GETs the server list and returns its names in order.
func (c *apiClient) names() []string {
	c.t.Helper()
	var list struct{ Servers []ServerEntry }
	c.do("GET", "/api/mcp/servers", "").want(c.t, http.StatusOK).decode(c.t, &list)
	var out []string
	for _, s := range list.Servers {
		out = append(out, s.Name)
	}
	return out
}

// waitState waits until GET /api/mcp/servers/{name} shows the server in
// one of the states, and returns its entry: it reads the entry at once
// and again after each of the server's state and tool changes. Ready
// counts once the entry's tool_count is set (by the tools_changed that
// follows the tools' registration, just after the state shows).
func (c *apiClient) waitState(name string, states ...status.State) ServerDetail {
	c.t.Helper()
	sub := c.rt.subscribe(c.t, name)
	defer sub.Close()
	d := c.entry(name)
	shows := func() bool { return slices.Contains(states, d.State) && (d.State != status.Ready || d.ToolCount > 0) }
	if shows() {
		return d
	}
	testutil.AwaitEvent(c.t, sub, 30*time.Second, fmt.Sprintf("the API to show %s in %v", name, states), func(e events.Event) bool {
		switch e.(type) {
		case events.StateChanged, events.ToolsChanged:
			d = c.entry(name)
			return shows()
		}
		return false
	})
	return d
}

// configPath is the runtime's config file.
func (rt *testRuntime) configPath() string { return filepath.Join(rt.dir, config.FileName) }

// readConfig returns the config file's bytes.
func readConfig(t *testing.T, rt *testRuntime) []byte {
	t.Helper()
	b, err := os.ReadFile(rt.configPath())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// wantConfigMode0600 fails unless the config file is owner-only and
// parses.
func wantConfigMode0600(t *testing.T, rt *testRuntime) *config.File {
	t.Helper()
	fi, err := os.Stat(rt.configPath())
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("config file mode %v after a write, want 0600", fi.Mode().Perm())
	}
	f, err := config.Parse(readConfig(t, rt))
	if err != nil {
		t.Fatalf("config file does not parse after a write: %v", err)
	}
	return f
}

// exampleBody is a POST body for the example server under name.
func exampleBody(t *testing.T, name string, extra map[string]any) string {
	t.Helper()
	body := map[string]any{
		"name": name, "type": "local", "command": []string{demoBin, "serve"},
		"env": map[string]string{testutil.MarkerEnv: marker},
	}
	for k, v := range extra {
		body[k] = v
	}
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// toolsOf counts the tools GET /api/mcp/tools lists for server.
func toolsOf(t *testing.T, api *apiClient, server string) int {
	t.Helper()
	var list struct{ Tools []struct{ Server string } }
	api.do("GET", "/api/mcp/tools", "").want(t, http.StatusOK).decode(t, &list)
	n := 0
	for _, tool := range list.Tools {
		if tool.Server == server {
			n++
		}
	}
	return n
}

// startWithFile starts a runtime on a state dir whose config file holds
// data as is (start() can only write a valid one).
func startWithFile(t *testing.T, data []byte) *testRuntime {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, config.FileName), data, 0o600); err != nil {
		t.Fatal(err)
	}
	return startIn(t, dir, Options{})
}
