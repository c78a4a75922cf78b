package runtime

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/openprogram/mcpvisor/status"
)

// TestHTTPBadInput: every class of bad request is refused with its status
// and, where one field is to blame, that field; the file stays byte for
// byte as it was and the running set does not change (same servers, same
// process).
func TestHTTPBadInput(t *testing.T) {
	rt := start(t, Options{}, exampleServer("ex"))
	api := newAPI(t, rt)
	pid := api.waitState("ex", status.Ready).PID
	huge := `{"name": "big", "type": "local", "command": ["x"], "env": {"A": "` + strings.Repeat("a", maxBodyBytes) + `"}}`
	local := func(extra string) string {
		return `{"name": "new", "type": "local", "command": ["` + demoBin + `", "serve"]` + extra + `}`
	}
	tests := []struct {
		name, method, path, ctype, body string
		code                            int
		field                           string // "-": the error names no field
		says                            string // a piece of the error message
	}{
		// The body itself.
		{"invalid JSON", "POST", "/api/mcp/servers", "application/json", `{"name": "new", "type": `, 400, "-", ""},
		{"trailing garbage", "POST", "/api/mcp/servers", "application/json", local("") + ` x`, 400, "-", ""},
		{"array body", "POST", "/api/mcp/servers", "application/json", `[]`, 400, "-", ""},
		{"empty body", "POST", "/api/mcp/servers", "application/json", ``, 400, "-", "empty"},
		{"no body, no type", "POST", "/api/mcp/servers", "", ``, 415, "-", "application/json"},
		{"text/plain", "POST", "/api/mcp/servers", "text/plain", local(""), 415, "-", "application/json"},
		{"form", "POST", "/api/mcp/servers", "application/x-www-form-urlencoded", `name=new`, 415, "-", "application/json"},
		{"no content type", "POST", "/api/mcp/servers", "", local(""), 415, "-", "application/json"},
		{"latin1", "POST", "/api/mcp/servers", "application/json; charset=latin1", local(""), 415, "-", ""},
		{"bad media type", "POST", "/api/mcp/servers", "application/json; ===", local(""), 415, "-", ""},
		{"over 1 MiB", "POST", "/api/mcp/servers", "application/json", huge, 413, "-", "larger than"},

		// The fields of a new server.
		{"unknown field", "POST", "/api/mcp/servers", "application/json", local(`, "bogus": 1`), 400, "bogus", "unknown"},
		{"unknown auth field", "POST", "/api/mcp/servers", "application/json", local(`, "auth": {"kind": "none", "x": 1}`), 400, "auth.x", ""},
		{"bad name", "POST", "/api/mcp/servers", "application/json", `{"name": "bad name", "type": "local", "command": ["x"]}`, 400, "name", ""},
		{"name too long", "POST", "/api/mcp/servers", "application/json", `{"name": "` + strings.Repeat("n", 49) + `", "type": "local", "command": ["x"]}`, 400, "name", ""},
		{"no name", "POST", "/api/mcp/servers", "application/json", `{"type": "local", "command": ["x"]}`, 400, "name", ""},
		{"unknown type", "POST", "/api/mcp/servers", "application/json", `{"name": "new", "type": "ftp", "command": ["x"]}`, 400, "type", ""},
		{"missing command", "POST", "/api/mcp/servers", "application/json", `{"name": "new", "type": "local"}`, 400, "command", ""},
		{"empty command", "POST", "/api/mcp/servers", "application/json", `{"name": "new", "type": "local", "command": []}`, 400, "command", ""},
		{"missing url", "POST", "/api/mcp/servers", "application/json", `{"name": "new", "type": "http"}`, 400, "url", ""},
		{"bad url", "POST", "/api/mcp/servers", "application/json", `{"name": "new", "type": "sse", "url": "ftp://x"}`, 400, "url", ""},
		{"wrong JSON type", "POST", "/api/mcp/servers", "application/json", local(`, "enabled": "yes"`), 400, "enabled", ""},
		{"timeout out of range", "POST", "/api/mcp/servers", "application/json", local(`, "timeout_seconds": 99999`), 400, "timeout_seconds", ""},
		{"unknown auth kind", "POST", "/api/mcp/servers", "application/json", `{"name": "new", "type": "http", "url": "https://x.example/mcp", "auth": {"kind": "magic"}}`, 400, "auth.kind", ""},
		{"exists", "POST", "/api/mcp/servers", "application/json", exampleBody(t, "ex", nil), 409, "-", "exists"},
		{"duplicate env key", "POST", "/api/mcp/servers", "application/json", local(`, "env": {"K": "a", "K": "b"}`), 400, "env", `duplicate key "K"`},
		{"header case variants", "POST", "/api/mcp/servers", "application/json", `{"name": "new", "type": "http", "url": "https://x.example/mcp", "headers": {"Authorization": "a", "authorization": "b"}}`, 400, "headers", `duplicate key "authorization"`},

		// PATCH.
		{"patch unknown server", "PATCH", "/api/mcp/servers/nope", "application/json", `{"timeout_seconds": 5}`, 404, "-", "unknown server"},
		{"patch bad name", "PATCH", "/api/mcp/servers/bad%20name", "application/json", `{"timeout_seconds": 5}`, 404, "-", ""},
		{"patch unknown field", "PATCH", "/api/mcp/servers/ex", "application/json", `{"bogus": 1}`, 400, "bogus", "unknown"},
		{"patch null", "PATCH", "/api/mcp/servers/ex", "application/json", `{"env": null}`, 400, "env", "null"},
		{"patch rename", "PATCH", "/api/mcp/servers/ex", "application/json", `{"name": "other"}`, 400, "name", "renaming"},
		{"patch unknown type", "PATCH", "/api/mcp/servers/ex", "application/json", `{"type": "ftp"}`, 400, "type", ""},
		{"patch to http without url", "PATCH", "/api/mcp/servers/ex", "application/json", `{"type": "http"}`, 400, "url", ""},
		{"patch empty command", "PATCH", "/api/mcp/servers/ex", "application/json", `{"command": []}`, 400, "command", ""},
		{"patch timeout 0", "PATCH", "/api/mcp/servers/ex", "application/json", `{"timeout_seconds": 0}`, 400, "timeout_seconds", ""},
		{"patch invalid JSON", "PATCH", "/api/mcp/servers/ex", "application/json", `{"enabled": fals`, 400, "-", ""},
		{"patch empty body", "PATCH", "/api/mcp/servers/ex", "application/json", ``, 400, "-", "empty"},
		{"patch without content type", "PATCH", "/api/mcp/servers/ex", "", `{"enabled": false}`, 415, "-", "application/json"},
		{"patch text/plain", "PATCH", "/api/mcp/servers/ex", "text/plain", `{"enabled": false}`, 415, "-", ""},
		{"patch duplicate env key", "PATCH", "/api/mcp/servers/ex", "application/json", `{"env": {"K": "a", "K": ""}}`, 400, "env", `duplicate key "K"`},
		{"patch over 1 MiB", "PATCH", "/api/mcp/servers/ex", "application/json", `{"env": {"A": "` + strings.Repeat("a", maxBodyBytes) + `"}}`, 413, "-", ""},

		// Other routes on unknown names.
		{"get unknown", "GET", "/api/mcp/servers/nope", "", ``, 404, "-", "nope"},
		{"delete unknown", "DELETE", "/api/mcp/servers/nope", "application/json", `{}`, 404, "-", "nope"},
		{"restart unknown", "POST", "/api/mcp/servers/nope/restart", "application/json", `{}`, 404, "-", "nope"},
		{"call unknown", "POST", "/api/mcp/tools/nope__x/call", "application/json", `{}`, 404, "-", "nope__x"},

		// Duplicate keys in the bodies of calls and prompts, at any depth.
		{"call duplicate arguments", "POST", "/api/mcp/tools/ex__echo/call", "application/json", `{"arguments": {"text": "a"}, "arguments": {"text": "b"}}`, 400, "arguments", `duplicate key "arguments"`},
		{"call duplicate argument", "POST", "/api/mcp/tools/ex__echo/call", "application/json", `{"arguments": {"text": "a", "text": "b"}}`, 400, "arguments.text", `duplicate key "arguments.text"`},
		{"call duplicate nested key", "POST", "/api/mcp/tools/ex__echo/call", "application/json", `{"arguments": {"text": "a", "o": [{"k": 1, "k": 2}]}}`, 400, "arguments.o[0].k", `duplicate key`},
		{"call duplicate deep down", "POST", "/api/mcp/tools/ex__echo/call", "application/json", `{"arguments": ` + strings.Repeat(`{"a": `, 500) + `{"k": 1, "k": 2}` + strings.Repeat(`}`, 500) + `}`, 400, "-", `duplicate key "arguments.a.a.`},
		{"prompt duplicate arguments", "POST", "/api/mcp/prompts/ex__greet/get", "application/json", `{"arguments": {"name": "a"}, "arguments": {"name": "b"}}`, 400, "arguments", `duplicate key "arguments"`},
		{"prompt duplicate argument", "POST", "/api/mcp/prompts/ex__greet/get", "application/json", `{"arguments": {"name": "a", "name": "b"}}`, 400, "arguments.name", `duplicate key "arguments.name"`},
	}
	before := readConfig(t, rt)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := serve(t, api.h, apiRequest{method: tt.method, path: tt.path, ctype: tt.ctype, body: tt.body})
			a.want(t, tt.code)
			e := a.apiError(t)
			switch {
			case tt.field == "-" && e.Field != "":
				t.Errorf("field %q, want none", e.Field)
			case tt.field != "-" && e.Field != tt.field:
				t.Errorf("field %q, want %q (error %q)", e.Field, tt.field, e.Error)
			}
			if !strings.Contains(e.Error, tt.says) {
				t.Errorf("error %q does not say %q", e.Error, tt.says)
			}
			if len(a.body) > 1024 {
				t.Errorf("error answer of %d bytes: the request is echoed back", len(a.body))
			}
			if got := readConfig(t, rt); !bytes.Equal(got, before) {
				t.Fatalf("the file changed:\n%s", got)
			}
			if names := api.names(); !slices.Equal(names, []string{"ex"}) {
				t.Fatalf("servers = %v, want only ex", names)
			}
			if d := api.entry("ex"); d.State != status.Ready || d.PID != pid {
				t.Fatalf("ex = %+v, want still ready with pid %d", d, pid)
			}
		})
	}
}
