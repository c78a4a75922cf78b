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
// route: the structured JSON is there and checked against the tool's
// output schema (it matches), annotations are kept, links are listed in
// Details. A secret of the server's config (the test marker) shows in
// none of those fields.
func TestEverythingResults(t *testing.T) {
	for _, transport := range []string{"stdio", "sse", "streamableHttp"} {
		t.Run(transport, func(t *testing.T) {
			srv, keep := everythingServer(t, transport)
			if srv.Env == nil { // plant the marker as a secret on HTTP too
				srv.Headers = map[string]string{"X-Test-Marker": marker}
			}
			rt := startRuntime(t, keep, srv)
			rt.waitReady(t, "everything")
			list := rt.waitTools(t, resultTools)
			h := rt.Handler()
			var checked []string // the runtime's own fields of every answer
			callBoth := func(name, args string) (tools.Result, httpAnswer) {
				t.Helper()
				var in map[string]any
				if err := json.Unmarshal([]byte(args), &in); err != nil {
					t.Fatal(err)
				}
				res := rt.call(t, name, in)
				ans := callHTTP(t, h, name, args)
				checked = append(checked, string(res.StructuredContent), mustMarshal(t, res.Details),
					string(ans.StructuredContent), mustMarshal(t, ans.Details))
				return res, ans
			}

			for _, tl := range list {
				if tl.Name == "everything__get-structured-content" && tl.OutputSchema == nil {
					t.Errorf("get-structured-content has no output schema: nothing was checked")
				}
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
			for _, text := range checked {
				if strings.Contains(text, marker) {
					t.Errorf("a result field shows the planted secret: %s", text)
				}
			}
		})
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
