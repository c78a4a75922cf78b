package runtime

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/openprogram/mcpvisor/internal/exampleserver"
	"github.com/openprogram/mcpvisor/internal/mcpconn"
	"github.com/openprogram/mcpvisor/internal/redact"
	"github.com/openprogram/mcpvisor/tools"
)

// TestIconsBoundedEverywhere: a tool and a prompt with 20 icons, the
// first a 1 MiB data: URI and the second quoting a secret in its URL,
// show at most mcpconn.MaxIcons of them, the big one dropped and the
// secret scrubbed, in GET /api/mcp/tools, the server detail and GET
// /api/mcp/prompts, and in the model-facing list_prompts (at most 4).
func TestIconsBoundedEverywhere(t *testing.T) {
	const secret = "sk-icon-token-planted-6610"
	ex := exampleServer("ex", "-icon-flood")
	ex.Env[exampleserver.IconTokenEnv] = secret
	rt := start(t, Options{}, ex)
	rt.waitReady(t, "ex")
	name := "ex__" + exampleserver.IconFloodName
	rt.awaitCatalog(t, "ex", "the icons prompt", func() bool { _, ok := rt.prompts.Get(name); return ok })
	api := newAPI(t, rt)

	check := func(where string, icons []tools.Icon, max int) {
		t.Helper()
		if len(icons) != max {
			t.Fatalf("%s: %d icons, want %d", where, len(icons), max)
		}
		if icons[0].Src != exampleserver.IconFloodURL+redact.Marker {
			t.Errorf("%s: first icon %q, want the big one dropped and the token scrubbed", where, icons[0].Src)
		}
		for i, icon := range icons[1:] {
			if icon.Src != exampleserver.FloodIconURL(i+2) {
				t.Errorf("%s: icon %d = %.80q, want %q", where, i+1, icon.Src, exampleserver.FloodIconURL(i+2))
			}
		}
	}
	var list, detail struct{ Tools []tools.Tool }
	body := api.do("GET", "/api/mcp/tools", "").want(t, http.StatusOK)
	body.decode(t, &list)
	detailBody := api.do("GET", "/api/mcp/servers/ex", "").want(t, http.StatusOK)
	detailBody.decode(t, &detail)
	var prompts struct {
		Prompts []struct {
			Name  string
			Icons []tools.Icon
		}
	}
	promptsBody := api.do("GET", "/api/mcp/prompts", "").want(t, http.StatusOK)
	promptsBody.decode(t, &prompts)
	for where, b := range map[string][]byte{"tools": body.body, "detail": detailBody.body, "prompts": promptsBody.body} {
		if strings.Contains(string(b), secret) || len(b) > 256<<10 {
			t.Errorf("GET %s: %d bytes, secret shown %v", where, len(b), strings.Contains(string(b), secret))
		}
	}
	for where, entries := range map[string][]tools.Tool{"tools": list.Tools, "detail": detail.Tools} {
		found := false
		for _, tool := range entries {
			if tool.Name == name {
				found = true
				check("GET "+where, tool.Icons, mcpconn.MaxIcons)
			}
		}
		if !found {
			t.Errorf("GET %s: no %s", where, name)
		}
	}
	found := false
	for _, p := range prompts.Prompts {
		if p.Name == name {
			found = true
			check("GET /api/mcp/prompts", p.Icons, mcpconn.MaxIcons)
		}
	}
	if !found {
		t.Errorf("GET /api/mcp/prompts: no %s in %+v", name, prompts)
	}

	var listed struct {
		Prompts []struct {
			Name  string
			Icons []tools.Icon
		}
	}
	res := mustCall(t, rt, "ex__list_prompts", map[string]any{})
	decodeListing(t, res, &listed)
	for _, p := range listed.Prompts {
		if p.Name == exampleserver.IconFloodName {
			check("list_prompts", p.Icons, 4)
		}
	}
	if data, _ := json.Marshal(res); strings.Contains(string(data), secret) {
		t.Errorf("list_prompts shows the secret")
	}
}
