//go:build unix

package peers_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// checkListingMetadata: list_prompts shows the titles server-everything
// gives its prompts, and the listings invent nothing it did not send (its
// prompts, static documents and templates have no icons or annotations,
// its documents and templates no titles).
func checkListingMetadata(t *testing.T, rt *testRuntime) {
	var prompts struct {
		Prompts []struct {
			Name, Title string
			Icons       json.RawMessage
		}
	}
	if err := json.Unmarshal([]byte(resultText(rt.call(t, "everything__list_prompts", map[string]any{}))), &prompts); err != nil {
		t.Fatal(err)
	}
	titles := map[string]string{}
	for _, p := range prompts.Prompts {
		titles["everything__"+p.Name] = p.Title
		if p.Icons != nil {
			t.Errorf("list_prompts: %s has icons %s, which the server did not send", p.Name, p.Icons)
		}
	}
	for _, want := range everythingPrompts {
		if got, ok := titles[want.name]; !ok || got != want.title {
			t.Errorf("list_prompts: %s has title %q, want %q", want.name, got, want.title)
		}
	}

	var resources struct {
		Resources []struct {
			URI, Title         string
			Icons, Annotations json.RawMessage
		}
		Templates []struct {
			URITemplate        string `json:"uri_template"`
			Title              string
			Icons, Annotations json.RawMessage
		} `json:"resource_templates"`
	}
	if err := json.Unmarshal([]byte(resultText(rt.call(t, "everything__list_resources", map[string]any{}))), &resources); err != nil {
		t.Fatal(err)
	}
	docs := 0
	for _, r := range resources.Resources {
		if strings.HasPrefix(r.URI, "demo://resource/static/document/") {
			docs++
			if r.Title != "" || r.Icons != nil || r.Annotations != nil {
				t.Errorf("list_resources: %s listed with title %q, icons %s, annotations %s; the server sent none", r.URI, r.Title, r.Icons, r.Annotations)
			}
		}
	}
	if docs == 0 || len(resources.Templates) == 0 {
		t.Fatalf("list_resources: %d documents and %d templates, want some of each", docs, len(resources.Templates))
	}
	for _, tp := range resources.Templates {
		if tp.Title != "" || tp.Icons != nil || tp.Annotations != nil {
			t.Errorf("list_resources: template %s listed with title %q, icons %s, annotations %s; the server sent none", tp.URITemplate, tp.Title, tp.Icons, tp.Annotations)
		}
	}
}
