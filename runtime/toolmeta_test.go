package runtime

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/internal/exampleserver"
	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/status"
	"github.com/openprogram/mcpvisor/tools"
)

// TestToolMetadata: a tool's title, annotations (only the hints sent),
// output schema, icons and _meta reach tools.Tool, GET /api/mcp/tools and
// the server detail, over stdio (output schema byte for byte) and over
// Streamable HTTP and SSE (re-encoded; plain-boolean hints only when true).
func TestToolMetadata(t *testing.T) {
	getServer := func(*http.Request) *mcp.Server { return exampleserver.NewServer(exampleserver.Options{}) }
	streamable := httptest.NewServer(mcp.NewStreamableHTTPHandler(getServer, nil))
	t.Cleanup(streamable.Close)
	sse := httptest.NewServer(mcp.NewSSEHandler(getServer, nil))
	t.Cleanup(sse.Close)
	rt := start(t, Options{}, exampleServer("ex"),
		config.Server{Name: "web", Type: config.TypeHTTP, URL: streamable.URL, Enabled: true},
		config.Server{Name: "old", Type: config.TypeSSE, URL: sse.URL, Enabled: true})
	api := newAPI(t, rt)

	yes, no := true, false
	// The SDK's server always writes readOnlyHint and idempotentHint; over
	// stdio the runtime sees that idempotentHint was sent (false), over
	// HTTP only that a true readOnlyHint was.
	wantHints := map[string]*tools.Annotations{
		"ex":  {Title: "Described", ReadOnlyHint: &yes, IdempotentHint: &no, OpenWorldHint: &no},
		"web": {Title: "Described", ReadOnlyHint: &yes, OpenWorldHint: &no},
		"old": {Title: "Described", ReadOnlyHint: &yes, OpenWorldHint: &no},
	}
	wantIcons := []tools.Icon{{Src: "data:image/png;base64,AA==", MIMEType: "image/png", Sizes: []string{"16x16"}, Theme: "dark"}}
	wantMeta := `{"ui":{"resourceUri":"` + exampleserver.AppResourceURI + `"}}`
	for name, hints := range wantHints {
		if st := rt.waitSettled(t, name); st.State != status.Ready {
			t.Fatalf("%s = %+v", name, st)
		}
		tool, ok := rt.Registry().Get(name + "__described")
		if !ok {
			t.Fatalf("%s__described not registered", name)
		}
		if tool.Title != "Described Tool" || !reflect.DeepEqual(tool.Annotations, hints) || !reflect.DeepEqual(tool.Icons, wantIcons) || !testutil.JSONEqual(string(tool.Meta), wantMeta) {
			t.Errorf("%s: title %q annotations %s icons %+v meta %s", name, tool.Title, mustJSON(t, tool.Annotations), tool.Icons, tool.Meta)
		}
		if name == "ex" && string(tool.OutputSchema) != exampleserver.RawOutputSchema {
			t.Errorf("stdio output schema = %s, want exactly %s", tool.OutputSchema, exampleserver.RawOutputSchema)
		}
		if !testutil.JSONEqual(string(tool.OutputSchema), exampleserver.RawOutputSchema) {
			t.Errorf("%s output schema = %s, want %s", name, tool.OutputSchema, exampleserver.RawOutputSchema)
		}
		echo, _ := rt.Registry().Get(name + "__echo")
		if echo.Title != "" || echo.Annotations != nil || echo.Icons != nil || echo.Meta != nil || echo.OutputSchema != nil {
			t.Errorf("%s echo has metadata it was not sent: %+v", name, echo)
		}
	}

	// Over the HTTP API: the same fields, and a hint not sent is absent.
	var list struct {
		Tools []map[string]json.RawMessage `json:"tools"`
	}
	api.do("GET", "/api/mcp/tools", "").want(t, http.StatusOK).decode(t, &list)
	var detail struct {
		Tools []map[string]json.RawMessage `json:"tools"`
	}
	api.do("GET", "/api/mcp/servers/ex", "").want(t, http.StatusOK).decode(t, &detail)
	for source, entries := range map[string][]map[string]json.RawMessage{"tools": list.Tools, "detail": detail.Tools} {
		described, echo := toolJSON(entries, "ex__described"), toolJSON(entries, "ex__echo")
		if described == nil || echo == nil {
			t.Fatalf("%s: ex__described or ex__echo missing", source)
		}
		if string(described["title"]) != `"Described Tool"` || string(described["output_schema"]) != exampleserver.RawOutputSchema || !testutil.JSONEqual(string(described["meta"]), wantMeta) ||
			!testutil.JSONEqual(string(described["icons"]), `[{"src":"data:image/png;base64,AA==","mime_type":"image/png","sizes":["16x16"],"theme":"dark"}]`) {
			t.Errorf("%s: described = %v", source, stringsOf(described))
		}
		if !testutil.JSONEqual(string(described["annotations"]), `{"title":"Described","read_only_hint":true,"idempotent_hint":false,"open_world_hint":false}`) {
			t.Errorf("%s: annotations = %s, want no destructive_hint (not sent)", source, described["annotations"])
		}
		for _, key := range []string{"title", "annotations", "output_schema", "icons", "meta"} {
			if _, ok := echo[key]; ok {
				t.Errorf("%s: echo has %q, which its server did not send", source, key)
			}
		}
	}
}

func toolJSON(entries []map[string]json.RawMessage, name string) map[string]json.RawMessage {
	i := slices.IndexFunc(entries, func(e map[string]json.RawMessage) bool { return string(e["name"]) == `"`+name+`"` })
	if i < 0 {
		return nil
	}
	return entries[i]
}

func stringsOf(m map[string]json.RawMessage) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = string(v)
	}
	return out
}
