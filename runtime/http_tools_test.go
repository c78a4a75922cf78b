package runtime

import (
	"bytes"
	"encoding/json"
	"image/png"
	"net/http"
	"strings"
	"testing"

	"github.com/openprogram/mcpvisor/internal/exampleserver"
	"github.com/openprogram/mcpvisor/status"
)

// TestHTTPListTools: GET /api/mcp/tools lists every registered tool with
// its server, original name, description and input schema (as the server
// sent it).
func TestHTTPListTools(t *testing.T) {
	// No server: an empty list, not null. (Started first, so that it is
	// shut down last: its cleanup checks that no server process is left.)
	empty := start(t, Options{})
	if a := serve(t, empty.Handler(), apiRequest{method: "GET", path: "/api/mcp/tools"}); string(bytes.TrimSpace(a.body)) != `{"tools":[]}` {
		t.Errorf("no tools = %s", a.body)
	}

	rt := start(t, Options{}, exampleServer("ex"))
	api := newAPI(t, rt)
	api.waitState("ex", status.Ready)
	a := api.do("GET", "/api/mcp/tools", "").want(t, http.StatusOK)
	var list struct {
		Tools []struct {
			Name         string          `json:"name"`
			Server       string          `json:"server"`
			OriginalName string          `json:"original_name"`
			Description  string          `json:"description"`
			InputSchema  json.RawMessage `json:"input_schema"`
		} `json:"tools"`
	}
	a.decode(t, &list)
	if len(list.Tools) != len(rt.Tools()) || len(list.Tools) == 0 {
		t.Fatalf("%d tools listed, the registry has %d", len(list.Tools), len(rt.Tools()))
	}
	found := false
	for _, tool := range list.Tools {
		if tool.Server != "ex" || tool.Name != "ex__"+tool.OriginalName || tool.Description == "" {
			t.Errorf("tool = %+v", tool)
		}
		if tool.Name == "ex__schema" {
			found = true
			if string(tool.InputSchema) != exampleserver.RawSchema {
				t.Errorf("schema = %s, want %s byte for byte", tool.InputSchema, exampleserver.RawSchema)
			}
		}
	}
	if !found {
		t.Error("ex__schema not listed")
	}
}

// TestHTTPCallTool runs each kind of call through POST
// /api/mcp/tools/{name}/call.
func TestHTTPCallTool(t *testing.T) {
	srv := exampleServer("ex")
	srv.TimeoutSeconds = 1 // for the timeout row
	rt := start(t, Options{}, srv)
	api := newAPI(t, rt)
	api.waitState("ex", status.Ready)

	tests := []struct {
		name  string
		tool  string
		ctype string
		body  string
		code  int
		check func(t *testing.T, a apiAnswer, res callResult)
	}{
		{name: "text", tool: "ex__echo", body: `{"arguments": {"text": "héllo"}}`, code: 200,
			check: func(t *testing.T, a apiAnswer, res callResult) {
				if len(res.Content) != 1 || res.Content[0].Type != "text" || *res.Content[0].Text != "héllo" || res.IsError {
					t.Errorf("echo = %s", a.body)
				}
				if !bytes.Contains(a.body, []byte(`"details":{}`)) {
					t.Errorf("details not an empty object: %s", a.body)
				}
			}},
		{name: "empty text keeps its text field", tool: "ex__echo", body: `{"arguments": {"text": ""}}`, code: 200,
			check: func(t *testing.T, a apiAnswer, res callResult) {
				if !bytes.Contains(a.body, []byte(`{"type":"text","text":""}`)) {
					t.Errorf("empty echo = %s", a.body)
				}
			}},
		{name: "numbers reach the server unrounded", tool: "ex__add", body: `{"arguments": {"a": 2, "b": 40.5}}`, code: 200,
			check: func(t *testing.T, a apiAnswer, res callResult) {
				if *res.Content[0].Text != "42.5" {
					t.Errorf("add = %s", a.body)
				}
			}},
		{name: "image", tool: "ex__image", body: `{}`, code: 200,
			check: func(t *testing.T, a apiAnswer, res callResult) {
				if len(res.Content) != 1 || res.Content[0].Type != "image" || res.Content[0].MIMEType != "image/png" || res.Content[0].Text != nil {
					t.Fatalf("image = %s", a.body)
				}
				if _, err := png.Decode(bytes.NewReader(res.Content[0].Data)); err != nil {
					t.Errorf("data is not a base64 PNG: %v", err)
				}
				if !bytes.Contains(a.body, []byte(`"mime_type":"image/png","data":"`)) {
					t.Errorf("image block keys: %s", a.body)
				}
			}},
		{name: "empty object", tool: "ex__image", body: "{}", code: 200},
		{name: "null arguments", tool: "ex__image", body: `{"arguments": null}`, code: 200},
		{name: "charset", tool: "ex__image", ctype: "application/json; charset=UTF-8", body: `{"arguments": {}}`, code: 200},
		{name: "tool error is a result", tool: "ex__fail", body: `{"arguments": {}}`, code: 200,
			check: func(t *testing.T, a apiAnswer, res callResult) {
				if !res.IsError || res.Details["is_error"] != true || len(res.Content) == 0 {
					t.Errorf("fail = %s", a.body)
				}
			}},
		{name: "unknown tool", tool: "ex__nope", body: `{"arguments": {}}`, code: 404,
			check: func(t *testing.T, a apiAnswer, _ callResult) {
				if e := a.apiError(t); !strings.Contains(e.Error, "ex__nope") || !strings.Contains(e.Error, "unknown tool") {
					t.Errorf("error %q", e.Error)
				}
			}},
		{name: "timeout", tool: "ex__sleep", body: `{"arguments": {"ms": 20000}}`, code: 504,
			check: func(t *testing.T, a apiAnswer, _ callResult) {
				if e := a.apiError(t); !strings.Contains(e.Error, "timed out") {
					t.Errorf("error %q", e.Error)
				}
			}},
		{name: "arguments not an object", tool: "ex__echo", body: `{"arguments": ["x"]}`, code: 400,
			check: func(t *testing.T, a apiAnswer, _ callResult) {
				if e := a.apiError(t); e.Field != "arguments" {
					t.Errorf("error %+v, want field arguments", e)
				}
			}},
		{name: "unknown field", tool: "ex__echo", body: `{"args": {"text": "x"}}`, code: 400,
			check: func(t *testing.T, a apiAnswer, _ callResult) {
				if e := a.apiError(t); e.Field != "args" {
					t.Errorf("error %+v, want field args", e)
				}
			}},
		{name: "invalid JSON", tool: "ex__echo", body: `{"arguments": {"text": "x"`, code: 400},
		{name: "not an object", tool: "ex__echo", body: `"x"`, code: 400},
		{name: "wrong content type", tool: "ex__echo", ctype: "text/plain", body: `{"arguments": {"text": "x"}}`, code: 415},
		{name: "too large", tool: "ex__echo", body: `{"arguments": {"text": "` + strings.Repeat("a", maxBodyBytes) + `"}}`, code: 413},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctype := tt.ctype
			if ctype == "" && tt.body != "" {
				ctype = "application/json"
			}
			a := serve(t, api.h, apiRequest{method: "POST", path: "/api/mcp/tools/" + tt.tool + "/call", ctype: ctype, body: tt.body})
			a.want(t, tt.code)
			var res callResult
			if tt.code == 200 {
				a.decode(t, &res)
				if res.Content == nil || res.Details == nil {
					t.Errorf("content or details missing: %s", a.body)
				}
			}
			if tt.check != nil {
				tt.check(t, a, res)
			}
		})
	}
	// The session survived all of it.
	if st := rt.waitSettled(t, "ex"); st.State != status.Ready {
		t.Fatalf("ex = %+v after the calls", st)
	}
}

// TestHTTPCallNotReady: a tool whose server is not ready is no longer
// listed, so calling it is an unknown tool; a disabled server's tools
// likewise.
func TestHTTPCallNotReady(t *testing.T) {
	rt := start(t, Options{}, exampleServer("ex"))
	api := newAPI(t, rt)
	api.waitState("ex", status.Ready)
	api.do("PATCH", "/api/mcp/servers/ex", `{"enabled": false}`).want(t, http.StatusOK)
	api.waitState("ex", status.Disabled)
	a := api.do("POST", "/api/mcp/tools/ex__echo/call", `{"arguments": {"text": "x"}}`)
	if a.code != http.StatusNotFound && a.code != http.StatusServiceUnavailable {
		t.Fatalf("call on a disabled server: %d %s, want 404 or 503", a.code, a.body)
	}
}
