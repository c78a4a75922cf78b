package runtime

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/exampleserver"
	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/status"
	"github.com/openprogram/mcpvisor/tools"
)

// httpResult is the HTTP answer of a tool call, as a host reads it.
type httpResult struct {
	Content []struct {
		Type        string                    `json:"type"`
		Text        string                    `json:"text"`
		MIMEType    string                    `json:"mime_type"`
		Data        []byte                    `json:"data"`
		Annotations *tools.ContentAnnotations `json:"annotations"`
	} `json:"content"`
	StructuredContent json.RawMessage            `json:"structured_content"`
	IsError           bool                       `json:"is_error"`
	Details           map[string]json.RawMessage `json:"details"`
}

func callOverHTTP(t *testing.T, api *apiClient, name, args string) (httpResult, string) {
	t.Helper()
	answer := api.do("POST", "/api/mcp/tools/"+name+"/call", `{"arguments":`+args+`}`).want(t, http.StatusOK)
	var res httpResult
	answer.decode(t, &res)
	return res, string(answer.body)
}

// Structured results over stdio, through Runtime.CallTool and the HTTP
// call route: a matching one carries its JSON; a broken or missing one is
// a readable tool error naming the mismatch; an isError one is passed on
// unchecked; a remote $ref leaves results unchecked with one event, not
// repeated when a relisting brings the same schema.
func TestStructuredResults(t *testing.T) {
	rt := start(t, Options{}, exampleServer("ex", "-result-tools", "-change-tool"))
	sub := rt.Subscribe(events.SubscribeOptions{Server: "ex", From: 1})
	defer sub.Close()
	if st := rt.waitSettled(t, "ex"); st.State != status.Ready {
		t.Fatalf("ex = %+v", st)
	}
	api := newAPI(t, rt)

	if tool, _ := rt.Registry().Get("ex__structured"); string(tool.OutputSchema) != exampleserver.StructuredSchema {
		t.Errorf("output schema = %s, want %s", tool.OutputSchema, exampleserver.StructuredSchema)
	}
	// Over stdio byte for byte as sent: key order, and an id a float64
	// cannot hold.
	ok := mustCall(t, rt, "ex__structured", map[string]any{"text": "hi"})
	_, body := callOverHTTP(t, api, "ex__structured", `{"text":"hi"}`)
	var viaHTTP struct {
		IsError           bool            `json:"is_error"`
		StructuredContent json.RawMessage `json:"structured_content"`
	}
	if err := json.NewDecoder(strings.NewReader(body)).Decode(&viaHTTP); err != nil {
		t.Fatal(err)
	}
	want := `{"text":"hi","n":1,"id":` + exampleserver.StructuredID + `}`
	for via, got := range map[string]json.RawMessage{"Go": ok.StructuredContent, "HTTP": viaHTTP.StructuredContent} {
		if string(got) != want {
			t.Errorf("%s: structured content = %s, want exactly %s", via, got, want)
		}
	}
	if ok.IsError || viaHTTP.IsError {
		t.Errorf("a matching result is an error: %+v / %+v", ok, viaHTTP)
	}

	broken := mustCall(t, rt, "ex__structured_broken", map[string]any{"text": "hi"})
	brokenHTTP, _ := callOverHTTP(t, api, "ex__structured_broken", `{"text":"hi"}`)
	if !broken.IsError || broken.StructuredContent != nil || !strings.Contains(broken.Content[0].Text, `/properties/n`) {
		t.Errorf("structured_broken = %+v, want a tool error naming /properties/n", broken)
	}
	if !brokenHTTP.IsError || brokenHTTP.StructuredContent != nil || brokenHTTP.Content[0].Text != broken.Content[0].Text {
		t.Errorf("structured_broken over HTTP = %+v", brokenHTTP)
	}
	if missing := mustCall(t, rt, "ex__structured_missing", nil); !missing.IsError {
		t.Errorf("structured_missing = %+v, want a tool error", missing)
	}
	if failing := mustCall(t, rt, "ex__structured_failing", nil); !failing.IsError || !testutil.JSONEqual(string(failing.StructuredContent), `{"n":"x"}`) {
		t.Errorf("structured_failing = %+v, want its own error, unchecked", failing)
	}
	if remote := mustCall(t, rt, "ex__remote_ref", nil); remote.IsError || !testutil.JSONEqual(string(remote.StructuredContent), `{"x":1}`) {
		t.Errorf("remote_ref = %+v, want it unchecked", remote)
	}

	// The warning came with the first listing; a relisting (the change
	// tool adds a tool) brings the same schema and says nothing again.
	testutil.Await(t, sub, eventsWait, "remote_ref's schema unusable", func(e events.OutputSchemaUnusable) bool {
		return e.Tool == "ex__remote_ref" && strings.Contains(e.Error, "no loader")
	})
	mustCall(t, rt, "ex__change", map[string]any{"list": "tools"})
	testutil.Await(t, sub, eventsWait, "the relisting", func(e events.ToolsChanged) bool { return slices.Contains(e.Added, "ex__extra_1") })
	testutil.NoEvent(t, sub, 200*time.Millisecond, "a second OutputSchemaUnusable", func(e events.Event) bool {
		_, again := e.(events.OutputSchemaUnusable)
		return again
	})
}

// Audio, annotations and resource links over stdio, through CallTool and
// the HTTP call route.
func TestAudioAnnotationsAndLinks(t *testing.T) {
	rt := start(t, Options{}, exampleServer("ex", "-result-tools"))
	if st := rt.waitSettled(t, "ex"); st.State != status.Ready {
		t.Fatalf("ex = %+v", st)
	}
	api := newAPI(t, rt)

	audio := mustCall(t, rt, "ex__audio", nil)
	want := tools.Content{Type: tools.ContentAudio, MIMEType: exampleserver.AudioMIMEType, Data: []byte(exampleserver.AudioData)}
	if len(audio.Content) != 1 || !reflect.DeepEqual(audio.Content[0], want) {
		t.Errorf("audio = %+v, want %+v", audio.Content, want)
	}
	if res, body := callOverHTTP(t, api, "ex__audio", `{}`); res.Content[0].Type != "audio" || res.Content[0].MIMEType != exampleserver.AudioMIMEType ||
		!strings.Contains(body, base64.StdEncoding.EncodeToString([]byte(exampleserver.AudioData))) {
		t.Errorf("audio over HTTP = %s", body)
	}

	prio := exampleserver.AnnotatedPrio
	wantNote := &tools.ContentAnnotations{Audience: []string{"user"}, Priority: &prio, LastModified: exampleserver.AnnotatedWhen}
	size := exampleserver.LinkSize
	wantLinks := []tools.ResourceLink{{URI: exampleserver.LinkURIPrefix + "7", Name: "note 7", Title: "Note", Description: "the note 7",
		MIMEType: exampleserver.LinkMIMEType, Size: &size}}
	wantEmbedded := []tools.ResourceLink{{URI: exampleserver.EmbeddedURI, MIMEType: exampleserver.EmbeddedMIMEType}}
	res := mustCall(t, rt, "ex__annotated", map[string]any{"text": "7"})
	if len(res.Content) != 3 || res.Content[0].Text != exampleserver.AnnotatedText || !reflect.DeepEqual(res.Content[0].Annotations, wantNote) {
		t.Fatalf("annotated = %s", mustJSON(t, res))
	}
	if !strings.HasPrefix(res.Content[1].Text, "[resource link: note 7 demo://notes/7") {
		t.Errorf("the link's text line = %q", res.Content[1].Text)
	}
	if !reflect.DeepEqual(res.Details["resource_links"], wantLinks) || !reflect.DeepEqual(res.Details["embedded_resources"], wantEmbedded) {
		t.Errorf("details = %s", mustJSON(t, res.Details))
	}
	viaHTTP, _ := callOverHTTP(t, api, "ex__annotated", `{"text":"7"}`)
	if !reflect.DeepEqual(viaHTTP.Content[0].Annotations, wantNote) || !testutil.JSONEqual(string(viaHTTP.Details["resource_links"]), mustJSON(t, wantLinks)) ||
		!testutil.JSONEqual(string(viaHTTP.Details["embedded_resources"]), mustJSON(t, wantEmbedded)) {
		t.Errorf("annotated over HTTP = %+v", viaHTTP)
	}
}

// The server echoes a secret of its config (the test marker, an env
// value) into its structured content, into a value the schema check
// quotes, and into a resource link: none of the runtime's own fields
// shows it, over the Go API or HTTP.
func TestResultFieldsHideSecrets(t *testing.T) {
	rt := start(t, Options{}, exampleServer("ex", "-result-tools"))
	if st := rt.waitSettled(t, "ex"); st.State != status.Ready {
		t.Fatalf("ex = %+v", st)
	}
	api := newAPI(t, rt)
	args := map[string]any{"text": marker}
	for _, name := range []string{"ex__structured", "ex__structured_broken", "ex__annotated"} {
		res := mustCall(t, rt, name, args)
		viaHTTP, _ := callOverHTTP(t, api, name, mustJSON(t, args))
		fields := map[string]any{"structured_content": res.StructuredContent, "details": res.Details,
			"http structured_content": viaHTTP.StructuredContent, "http details": viaHTTP.Details}
		if res.IsError { // the mismatch message is the runtime's
			fields["message"], fields["http message"] = res.Content[0].Text, viaHTTP.Content[0].Text
		}
		if name == "ex__structured" && !strings.Contains(string(res.StructuredContent), "[redacted]") {
			t.Errorf("structured content = %s, want the echoed secret redacted", res.StructuredContent)
		}
		for field, v := range fields {
			if text := mustJSON(t, v); strings.Contains(text, marker) {
				t.Errorf("%s: %s shows the secret: %s", name, field, text)
			}
		}
	}
	assertScrubbed(t, rt, []string{marker})
}
