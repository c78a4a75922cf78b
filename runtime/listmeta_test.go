package runtime

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/openprogram/mcpvisor/internal/exampleserver"
	"github.com/openprogram/mcpvisor/prompts"
	"github.com/openprogram/mcpvisor/tools"
)

// listedIcon is an icon as the model-facing listings show it.
type listedIcon struct {
	Src      string   `json:"src"`
	MIMEType string   `json:"mime_type"`
	Sizes    []string `json:"sizes"`
}

// listedAnn are a resource's annotations as list_resources shows them.
type listedAnn struct {
	Audience     []string `json:"audience"`
	Priority     float64  `json:"priority"`
	LastModified string   `json:"last_modified"`
}

// The meta tools' listings show the titles, icons and annotations the
// example server sent, the icons bounded (its big data: URI is left out
// of the model's listing), and the prompt registry and GET
// /api/mcp/prompts carry the prompt's icons, all of them.
func TestListingMetadata(t *testing.T) {
	rt := start(t, Options{}, exampleServer("ex"))
	rt.waitReady(t, "ex")
	small := exampleserver.SmallIcon()
	wantIcon := listedIcon{Src: small.Source, MIMEType: small.MIMEType, Sizes: small.Sizes}

	var resources struct {
		Resources []struct {
			URI, Title  string
			Icons       []listedIcon
			Annotations *listedAnn
		}
		Templates []struct {
			URITemplate string `json:"uri_template"`
			Title       string
			Icons       []listedIcon
			Annotations *listedAnn
		} `json:"resource_templates"`
	}
	decodeListing(t, mustCall(t, rt, "ex__list_resources", map[string]any{}), &resources)
	if len(resources.Resources) != 1 || len(resources.Templates) != 1 {
		t.Fatalf("list_resources = %+v, want the readme and the notes template", resources)
	}
	r := resources.Resources[0]
	if r.Title != "About the example server" || len(r.Icons) != 1 || !iconEqual(r.Icons[0], wantIcon) || r.Annotations == nil ||
		!slices.Equal(r.Annotations.Audience, []string{"user", "assistant"}) || r.Annotations.Priority != 0.8 ||
		r.Annotations.LastModified != exampleserver.ReadmeModified {
		t.Errorf("readme listed as %+v (annotations %+v); want its title, the small icon only and its annotations", r, r.Annotations)
	}
	tm := resources.Templates[0]
	if tm.Title != "Notes" || len(tm.Icons) != 1 || !iconEqual(tm.Icons[0], wantIcon) || tm.Annotations == nil ||
		!slices.Equal(tm.Annotations.Audience, []string{"assistant"}) || tm.Annotations.Priority != 0 || tm.Annotations.LastModified != "" {
		t.Errorf("template listed as %+v (annotations %+v); want its title, icon and audience only", tm, tm.Annotations)
	}

	var listed struct {
		Prompts []struct {
			Name, Title string
			Icons       []listedIcon
		}
	}
	decodeListing(t, mustCall(t, rt, "ex__list_prompts", map[string]any{}), &listed)
	if len(listed.Prompts) != 1 || listed.Prompts[0].Title != "Greet someone" || len(listed.Prompts[0].Icons) != 1 ||
		!iconEqual(listed.Prompts[0].Icons[0], wantIcon) {
		t.Errorf("list_prompts = %+v, want greet's title and its small icon only", listed)
	}

	big := exampleserver.BigIcon()
	wantIcons := []tools.Icon{{Src: small.Source, MIMEType: small.MIMEType, Sizes: small.Sizes},
		{Src: big.Source, MIMEType: big.MIMEType, Sizes: big.Sizes}}
	rt.awaitCatalog(t, "ex", "the greet prompt", func() bool { _, ok := rt.prompts.Get("ex__greet"); return ok })
	if got := rt.Prompts(); len(got) != 1 || !slices.EqualFunc(got[0].Icons, wantIcons, sameIcon) {
		t.Errorf("Prompts() = %+v, want greet with both its icons", got)
	}
	var api struct{ Prompts []prompts.Prompt }
	newAPI(t, rt).do("GET", "/api/mcp/prompts", "").want(t, 200).decode(t, &api)
	if len(api.Prompts) != 1 || !slices.EqualFunc(api.Prompts[0].Icons, wantIcons, sameIcon) {
		t.Errorf("GET /api/mcp/prompts = %+v, want greet with both its icons", api)
	}
}

func decodeListing(t *testing.T, res tools.Result, v any) {
	t.Helper()
	if res.IsError || len(res.Content) != 1 {
		t.Fatalf("listing %+v", res)
	}
	if err := json.Unmarshal([]byte(res.Content[0].Text), v); err != nil {
		t.Fatalf("listing %q: %v", res.Content[0].Text, err)
	}
}

func iconEqual(a, b listedIcon) bool {
	return a.Src == b.Src && a.MIMEType == b.MIMEType && slices.Equal(a.Sizes, b.Sizes)
}

func sameIcon(a, b tools.Icon) bool {
	return a.Src == b.Src && a.MIMEType == b.MIMEType && slices.Equal(a.Sizes, b.Sizes) && a.Theme == b.Theme
}
