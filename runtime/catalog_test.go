package runtime

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/internal/testutil"
)

// Planted secrets of the fake home's host files: no catalog, diff or apply
// answer and no log may show them.
const (
	catalogSecret  = "CATALOG-SECRET-planted-71c2aa90"
	catalogSecret2 = "CATALOG-SECRET-header-5b8e13d4"
)

// catalogHome writes a fake home with a Claude Code ~/.claude.json of two
// example servers ("alpha" with a ${GITHUB_TOKEN} reference and a literal
// secret, "beta") and a user and a project entry both named "gamma", and a
// Cursor file with a remote server whose header is a secret. It returns
// the home and the project folder.
func catalogHome(t *testing.T) (home, project string) {
	t.Helper()
	home, project = t.TempDir(), t.TempDir()
	example := func(env map[string]string) map[string]any {
		env[testutil.MarkerEnv] = marker
		return map[string]any{"type": "stdio", "command": demoBin, "args": []string{"serve"}, "env": env}
	}
	write := func(path string, v any) {
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(home, ".claude.json"), map[string]any{
		"numStartups": 3,
		"mcpServers": map[string]any{
			"alpha": example(map[string]string{"TOKEN": "${GITHUB_TOKEN}", "LITERAL": catalogSecret}),
			"beta":  example(map[string]string{}),
			"gamma": example(map[string]string{"WHERE": "user"}),
		},
		"projects": map[string]any{project: map[string]any{"history": []string{"x"}}},
	})
	write(filepath.Join(project, ".mcp.json"), map[string]any{"mcpServers": map[string]any{
		"gamma": example(map[string]string{"WHERE": "project"}),
	}})
	write(filepath.Join(home, ".cursor", "mcp.json"), map[string]any{"mcpServers": map[string]any{
		"remote": map[string]any{"url": "https://mcp.example.invalid/mcp", "headers": map[string]string{"Authorization": "Bearer " + catalogSecret2}},
	}})
	return home, project
}

// catalogLookup is the runtime's environment in the catalog tests.
func catalogLookup(k string) (string, bool) {
	if k == "GITHUB_TOKEN" {
		return refSecret, true
	}
	return "", false
}

// startCatalog starts a runtime on the fake home with the given servers.
func startCatalog(t *testing.T, servers ...config.Server) (*testRuntime, *apiClient) {
	t.Helper()
	home, project := catalogHome(t)
	rt := start(t, Options{Home: home, Projects: []string{project}, LookupEnv: catalogLookup}, servers...)
	return rt, newAPI(t, rt)
}

// wantNoCatalogSecret fails if any text shows a planted secret or the
// expanded reference.
func wantNoCatalogSecret(t *testing.T, rt *testRuntime, texts ...string) {
	t.Helper()
	assertScrubbed(t, rt, []string{catalogSecret, catalogSecret2, refSecret}, texts...)
	for _, text := range texts {
		if strings.Contains(text, catalogSecret) || strings.Contains(text, catalogSecret2) || strings.Contains(text, refSecret) {
			t.Errorf("an answer shows a planted secret")
		}
	}
}

// GET /api/mcp/catalog lists the templates and the fake home's hosts,
// each config masked as every route masks it: a reference-only secret as
// its reference, any other secret as a mask.
func TestCatalogRoute(t *testing.T) {
	rt, api := startCatalog(t)
	a := api.do("GET", "/api/mcp/catalog", "").want(t, http.StatusOK)
	body := string(a.body)
	var list CatalogList
	a.decode(t, &list)
	byKey := map[string]CatalogEntry{}
	for _, e := range list.Entries {
		file := ""
		if e.File != "" {
			file = filepath.Base(e.File)
		}
		byKey[string(e.Source)+" "+e.Name+" "+file] = e
	}
	alpha, ok := byKey["claude-code alpha .claude.json"]
	if !ok || alpha.Config == nil {
		t.Fatalf("no alpha in %s", body)
	}
	if alpha.Config.Env["TOKEN"] != (config.SecretView{HasValue: true, Reference: "${GITHUB_TOKEN}"}) ||
		!alpha.Config.Env["LITERAL"].HasValue || alpha.Config.Env["LITERAL"].Masked != config.Mask(catalogSecret) {
		t.Errorf("alpha's env = %+v", alpha.Config.Env)
	}
	if len(alpha.Requires) != 1 || alpha.Requires[0] != "GITHUB_TOKEN" {
		t.Errorf("alpha requires %q", alpha.Requires)
	}
	if !strings.Contains(body, `"TOKEN":{"has_value":true,"reference":"${GITHUB_TOKEN}"}`) {
		t.Errorf("the body lacks the reference form")
	}
	for _, k := range []string{"claude-code gamma .claude.json", "claude-code gamma .mcp.json", "cursor remote mcp.json", "builtin github "} {
		if _, ok := byKey[k]; !ok {
			t.Errorf("no entry %q", k)
		}
	}
	if r := byKey["cursor remote mcp.json"]; r.Config == nil || !r.Config.Headers["Authorization"].HasValue {
		t.Errorf("cursor remote = %+v", r)
	}
	if gh := byKey["builtin github "]; gh.Config == nil || gh.Config.Headers["Authorization"].Reference != "Bearer ${GITHUB_TOKEN}" {
		t.Errorf("github template = %+v", gh.Config)
	}
	if list.Warnings == nil || strings.Contains(body, `"warnings":null`) {
		t.Errorf("warnings are null, want []")
	}
	wantNoCatalogSecret(t, rt, body)
}
