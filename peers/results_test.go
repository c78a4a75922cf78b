//go:build unix

package peers_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/tools"
)

// resultTools are the server-everything tools whose results carry more
// than text and images.
var resultTools = []string{"everything__get-structured-content", "everything__get-annotated-message", "everything__get-resource-links"}

// server-everything's structured result, annotated message and resource
// links on every transport, through Runtime.CallTool and the HTTP call
// route: get-structured-content shows its title, annotations and output
// schema (T1's done-when), its structured JSON is there and checked
// against that schema (it matches), annotations are kept, links are
// listed in Details.
//
// server-everything echoes nothing of its config into these fields (its
// structured result and links are fixed; get-env returns the environment
// as text only), so no secret check here could fail: the proof that the
// new fields hide secrets is the example server's, which echoes its
// config's secret into each of them (runtime's TestResultFieldsHideSecrets
// and TestToolMetadataHidesSecrets).
func TestEverythingResults(t *testing.T) {
	for _, transport := range []string{"stdio", "sse", "streamableHttp"} {
		t.Run(transport, func(t *testing.T) {
			srv, keep := everythingServer(t, transport)
			rt := startRuntime(t, keep, srv)
			rt.waitReady(t, "everything")
			list := rt.waitTools(t, resultTools)
			h := rt.Handler()
			callBoth := func(name, args string) (tools.Result, httpAnswer) {
				t.Helper()
				var in map[string]any
				if err := json.Unmarshal([]byte(args), &in); err != nil {
					t.Fatal(err)
				}
				return rt.call(t, name, in), callHTTP(t, h, name, args)
			}

			for _, tl := range list {
				if tl.Name == "everything__get-structured-content" {
					checkStructuredContentTool(t, "Go API", tl.Title, tl.Annotations, tl.OutputSchema)
				}
			}
			var listed struct {
				Tools []struct {
					Name         string             `json:"name"`
					Title        string             `json:"title"`
					Annotations  *tools.Annotations `json:"annotations"`
					OutputSchema json.RawMessage    `json:"output_schema"`
				} `json:"tools"`
			}
			getJSON(t, h, "/api/mcp/tools", &listed)
			found := false
			for _, tl := range listed.Tools {
				if tl.Name == "everything__get-structured-content" {
					found = true
					checkStructuredContentTool(t, "GET /api/mcp/tools", tl.Title, tl.Annotations, tl.OutputSchema)
				}
			}
			if !found {
				t.Errorf("GET /api/mcp/tools has no everything__get-structured-content")
			}
			const weather = `{"temperature":36,"conditions":"Light rain / drizzle","humidity":82}`
			res, ans := callBoth("everything__get-structured-content", `{"location":"Chicago"}`)
			if res.IsError || !testutil.JSONEqual(string(res.StructuredContent), weather) {
				t.Errorf("get-structured-content = %+v (structured %s), want %s", res, res.StructuredContent, weather)
			}
			if ans.IsError || !testutil.JSONEqual(string(ans.StructuredContent), weather) {
				t.Errorf("over HTTP: %+v, want structured_content %s", ans, weather)
			}

			res, ans = callBoth("everything__get-annotated-message", `{"messageType":"error","includeImage":true}`)
			prio := 1.0
			want := &tools.ContentAnnotations{Audience: []string{"user", "assistant"}, Priority: &prio}
			if len(res.Content) != 2 || !reflect.DeepEqual(res.Content[0].Annotations, want) || res.Content[1].Annotations == nil ||
				res.Content[1].Type != tools.ContentImage {
				t.Errorf("get-annotated-message = %s, want the text annotated %+v and an annotated image", mustMarshal(t, res.Content), want)
			}
			if len(ans.Content) != 2 || !reflect.DeepEqual(ans.Content[0].Annotations, want) {
				t.Errorf("over HTTP: %+v", ans.Content)
			}

			res, ans = callBoth("everything__get-resource-links", `{"count":2}`)
			links, _ := res.Details["resource_links"].([]tools.ResourceLink)
			if len(links) != 2 || links[0].Name != "Blob Resource 1" || links[1].Name != "Text Resource 2" ||
				!strings.HasPrefix(links[1].URI, "demo://resource/dynamic/text/") || links[1].MIMEType != "text/plain" {
				t.Errorf("resource links = %+v", links)
			}
			var viaHTTP []tools.ResourceLink
			if err := json.Unmarshal(ans.Details["resource_links"], &viaHTTP); err != nil || !reflect.DeepEqual(viaHTTP, links) {
				t.Errorf("resource links over HTTP = %s (%v), want %+v", ans.Details["resource_links"], err, links)
			}
			if len(res.Content) != 3 || !strings.HasPrefix(res.Content[1].Text, "[resource link: Blob Resource 1 ") {
				t.Errorf("the links' text lines = %+v", res.Content)
			}

			// Its schema compiled, so the structured result above was checked.
			if strings.Contains(rt.logs.String(), "output schema unusable") {
				t.Errorf("an output schema of server-everything was unusable:\n%s", rt.logs.String())
			}
		})
	}
}

// checkStructuredContentTool asserts what server-everything sends of
// get-structured-content (its tools/get-structured-content.js): the
// title, all four hints as sent (on HTTP and SSE too: the SDK decodes
// destructive and open-world as pointers, and read-only and idempotent,
// plain booleans, are true), and the zod output schema of three typed
// properties.
func checkStructuredContentTool(t *testing.T, where, title string, a *tools.Annotations, schema json.RawMessage) {
	t.Helper()
	if title != "Get Structured Content Tool" {
		t.Errorf("%s: title %q", where, title)
	}
	yes, no := true, false
	want := &tools.Annotations{ReadOnlyHint: &yes, DestructiveHint: &no, IdempotentHint: &yes, OpenWorldHint: &no}
	if !reflect.DeepEqual(a, want) {
		t.Errorf("%s: annotations %s, want %s", where, mustMarshal(t, a), mustMarshal(t, want))
	}
	var s struct {
		Type       string                       `json:"type"`
		Properties map[string]map[string]string `json:"properties"`
		Required   []string                     `json:"required"`
	}
	if err := json.Unmarshal(schema, &s); err != nil || s.Type != "object" || len(s.Properties) != 3 ||
		s.Properties["temperature"]["type"] != "number" || s.Properties["conditions"]["type"] != "string" ||
		s.Properties["humidity"]["type"] != "number" || len(s.Required) != 3 {
		t.Errorf("%s: output schema %s (%v), want an object of temperature, conditions and humidity, all required", where, schema, err)
	}
}

// getJSON decodes the answer of a GET on h.
func getJSON(t *testing.T, h http.Handler, path string, into any) {
	t.Helper()
	rec := serveAPI(h, "GET", path, "")
	if rec.Code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
	}
	if err := json.Unmarshal(rec.Body.Bytes(), into); err != nil {
		t.Fatalf("decoding %s: %v", rec.Body, err)
	}
}

// httpAnswer is the HTTP answer of a tool call.
type httpAnswer struct {
	Content []struct {
		Type        string                    `json:"type"`
		Annotations *tools.ContentAnnotations `json:"annotations"`
	} `json:"content"`
	StructuredContent json.RawMessage            `json:"structured_content"`
	IsError           bool                       `json:"is_error"`
	Details           map[string]json.RawMessage `json:"details"`
}

func callHTTP(t *testing.T, h http.Handler, name, args string) httpAnswer {
	t.Helper()
	rec := serveAPI(h, "POST", "/api/mcp/tools/"+name+"/call", `{"arguments":`+args+`}`)
	if rec.Code != http.StatusOK {
		t.Fatalf("POST %s: %d %s", name, rec.Code, rec.Body)
	}
	var ans httpAnswer
	if err := json.Unmarshal(rec.Body.Bytes(), &ans); err != nil {
		t.Fatalf("decoding %s: %v", rec.Body, err)
	}
	return ans
}

func mustMarshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
