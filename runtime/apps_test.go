package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/internal/exampleserver"
	"github.com/openprogram/mcpvisor/internal/redact"
	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/tools"
)

// TestMCPApps: with RendersApps the example server (over stdio) sends its
// app tool, marked with its ui:// resource, and its app-only tool, which
// stays out of Tools (the model's list) but is in GET /api/mcp/tools with
// its visibility and callable; the resource reads back with its _meta on
// the Go API and the HTTP route.
func TestMCPApps(t *testing.T) {
	rt := start(t, Options{RendersApps: true}, exampleServer("ex"))
	rt.waitReady(t, "ex")
	api := newAPI(t, rt)

	app, ok := rt.Registry().Get("ex__app")
	if !ok || app.UIResourceURI != exampleserver.AppResourceURI || !slices.Equal(app.Visibility, []string{"model", "app"}) {
		t.Fatalf("ex__app = %+v (registered %v), want ui_resource_uri %s for model and app", app, ok, exampleserver.AppResourceURI)
	}
	only, ok := rt.Registry().Get("ex__app_refresh")
	if !ok || only.ForModel() || !only.ForApp() || only.UIResourceURI != exampleserver.AppResourceURI {
		t.Fatalf("ex__app_refresh = %+v (registered %v), want an app-only tool", only, ok)
	}
	model := names(rt.Tools())
	if slices.Contains(model, "ex__app_refresh") || !slices.Contains(model, "ex__app") {
		t.Errorf("Tools() = %v: want ex__app and not the app-only ex__app_refresh", model)
	}
	res, err := rt.CallTool(context.Background(), "ex__app_refresh", nil)
	if err != nil || len(res.Content) != 1 || res.Content[0].Text != "app refreshed" {
		t.Errorf("CallTool(ex__app_refresh) = %+v, %v", res, err)
	}
	api.do("POST", "/api/mcp/tools/ex__app_refresh/call", "").want(t, http.StatusOK)

	var list struct {
		Tools []struct {
			Name          string   `json:"name"`
			UIResourceURI string   `json:"ui_resource_uri"`
			Visibility    []string `json:"visibility"`
		} `json:"tools"`
	}
	api.do("GET", "/api/mcp/tools", "").want(t, http.StatusOK).decode(t, &list)
	seen := map[string][]string{}
	for _, tool := range list.Tools {
		if tool.Visibility == nil {
			t.Errorf("%s has no visibility in GET /api/mcp/tools", tool.Name)
		}
		seen[tool.Name] = tool.Visibility
		if tool.Name == "ex__app" && tool.UIResourceURI != exampleserver.AppResourceURI {
			t.Errorf("ex__app ui_resource_uri = %q", tool.UIResourceURI)
		}
	}
	if !slices.Equal(seen["ex__app_refresh"], []string{"app"}) || !slices.Equal(seen["ex__echo"], []string{"model", "app"}) {
		t.Errorf("visibilities in GET /api/mcp/tools = %v", seen)
	}
	detail := api.entry("ex")
	for _, e := range detail.Tools {
		if e.Name == "ex__app_refresh" && (!slices.Equal(e.Visibility, []string{"app"}) || e.UIResourceURI != exampleserver.AppResourceURI) {
			t.Errorf("server detail of ex__app_refresh = %+v", e)
		}
	}

	read, err := rt.ReadResource(context.Background(), "ex", exampleserver.AppResourceURI)
	if err != nil || len(read.Contents) != 1 {
		t.Fatalf("ReadResource = %+v, %v", read, err)
	}
	c := read.Contents[0]
	if c.URI != exampleserver.AppResourceURI || c.MIMEType != tools.AppMIMEType || c.Text != exampleserver.AppHTML || c.IsBlob() || !testutil.JSONEqual(string(c.Meta), exampleserver.AppResourceMeta) {
		t.Errorf("ReadResource contents = %+v (meta %s)", c, c.Meta)
	}

	var answer struct {
		Contents []map[string]json.RawMessage `json:"contents"`
	}
	api.do("POST", "/api/mcp/resources/read", `{"server": "ex", "uri": "ui://demo/app"}`).want(t, http.StatusOK).decode(t, &answer)
	if len(answer.Contents) != 1 {
		t.Fatalf("read answer = %+v", answer)
	}
	got := stringsOf(answer.Contents[0])
	if got["uri"] != `"ui://demo/app"` || got["mime_type"] != `"text/html;profile=mcp-app"` || !testutil.JSONEqual(got["text"], mustJSON(t, exampleserver.AppHTML)) ||
		!testutil.JSONEqual(got["meta"], exampleserver.AppResourceMeta) || got["blob"] != "" {
		t.Errorf("read answer contents = %v", got)
	}
}

// TestMCPAppsOff: without RendersApps the runtime does not advertise the
// extension, so the example server hides its app tools.
func TestMCPAppsOff(t *testing.T) {
	rt := start(t, Options{}, exampleServer("ex"))
	rt.waitReady(t, "ex")
	all := names(rt.Registry().List())
	if slices.Contains(all, "ex__app") || slices.Contains(all, "ex__app_refresh") || !slices.Contains(all, "ex__echo") {
		t.Errorf("registry = %v: the app tools are shown to a client that does not render apps", all)
	}
}

// TestReadResourceErrors: the route's refusals, each with its status and
// the field to blame, and a server error quoting a planted secret reaches
// neither the Go error, the answer nor the log.
func TestReadResourceErrors(t *testing.T) {
	const secret = "sk-apps-planted-0001"
	ex := exampleServer("ex", "-leak-tool")
	ex.Env["API_KEY"] = secret
	rt := start(t, Options{RendersApps: true}, ex,
		config.Server{Name: "off", Type: config.TypeLocal, Command: []string{demoBin, "serve"}, Enabled: false})
	rt.waitReady(t, "ex")
	api := newAPI(t, rt)

	long := `"` + strings.Repeat("x", MaxResourceURIBytes+1) + `"`
	for _, tc := range []struct {
		body  string
		code  int
		field string
	}{
		{`{"server": "nope", "uri": "ui://demo/app"}`, http.StatusNotFound, ""},
		{`{"server": "off", "uri": "ui://demo/app"}`, http.StatusServiceUnavailable, ""},
		{`{"server": "ex", "uri": "ui://demo/none"}`, http.StatusNotFound, ""},
		{`{"uri": "ui://demo/app"}`, http.StatusBadRequest, "server"},
		{`{"server": "ex"}`, http.StatusBadRequest, "uri"},
		{`{"server": "ex", "uri": 7}`, http.StatusBadRequest, "uri"},
		{`{"server": "ex", "uri": ""}`, http.StatusBadRequest, "uri"},
		{`{"server": "ex", "uri": ` + long + `}`, http.StatusBadRequest, "uri"},
		{`{"server": "ex", "uri": "ui://demo/app", "extra": 1}`, http.StatusBadRequest, "extra"},
		{`{"server": "ex", "uri": "ui://demo/app", "uri": "x"}`, http.StatusBadRequest, "uri"},
		{`{"server": "ex", "uri": "ui://demo/leak/API_KEY"}`, http.StatusBadGateway, ""},
	} {
		a := api.do("POST", "/api/mcp/resources/read", tc.body).want(t, tc.code)
		if e := a.apiError(t); e.Field != tc.field || strings.Contains(string(a.body), secret) {
			t.Errorf("%.80s: field %q (want %q), body %.200s", tc.body, e.Field, tc.field, a.body)
		}
	}
	_, err := rt.ReadResource(context.Background(), "ex", "ui://demo/leak/API_KEY")
	var rpc *jsonrpc.Error
	// The server did quote it: the error shows where it was scrubbed.
	if err == nil || strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), "API_KEY="+redact.Marker) || !errors.As(err, &rpc) {
		t.Errorf("ReadResource of the leaking resource: %v (want a scrubbed JSON-RPC error)", err)
	}
	if _, err := rt.ReadResource(context.Background(), "ex", ""); !errors.Is(err, ErrBadResourceURI) {
		t.Errorf("ReadResource with no URI: %v, want ErrBadResourceURI", err)
	}
	if strings.Contains(rt.logs.String(), secret) {
		t.Error("the planted secret is in the log")
	}
}

// TestReadResourceNotDeclared: a server without the resources capability
// is refused without a request (ErrNotDeclared, 409).
func TestReadResourceNotDeclared(t *testing.T) {
	transport := func(config.Server) mcp.Transport {
		srv := mcp.NewServer(&mcp.Implementation{Name: "plain", Version: "1"}, nil)
		mcp.AddTool(srv, &mcp.Tool{Name: "t"}, noopTool)
		return connected(srv)
	}
	rt := start(t, Options{transport: transport}, memServer("plain"))
	rt.waitReady(t, "plain")
	if _, err := rt.ReadResource(context.Background(), "plain", "demo://x"); !errors.Is(err, ErrNotDeclared) {
		t.Errorf("ReadResource = %v, want ErrNotDeclared", err)
	}
	newAPI(t, rt).do("POST", "/api/mcp/resources/read", `{"server": "plain", "uri": "demo://x"}`).want(t, http.StatusConflict)
}

func names(list []tools.Tool) []string {
	var out []string
	for _, t := range list {
		out = append(out, t.Name)
	}
	return out
}
