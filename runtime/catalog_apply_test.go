package runtime

import (
	"net/http"
	"strings"
	"testing"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/status"
)

// Applying two entries brings them up as ready servers with tools; the
// ${GITHUB_TOKEN} reference stays a reference in the file and in every
// answer while the server gets the value; the bad entries of the same
// request are refused, each naming its field, and change nothing.
func TestCatalogApply(t *testing.T) {
	rt, api := startCatalog(t, exampleServer("beta"))
	before := len(rt.config.Load().Servers)
	body := `{"entries": [
		{"source": "claude-code", "name": "alpha"},
		{"source": "claude-code", "name": "gamma", "file": "` + rt.opts.Projects[0] + `/.mcp.json", "as": "gamma-project", "config": {"env": {"EXTRA": "${GITHUB_TOKEN}"}}},
		{"source": "claude-code", "name": "beta"},
		{"source": "claude-code", "name": "gamma"},
		{"source": "claude-code", "name": "nope"},
		{"source": "nowhere", "name": "alpha"},
		{"source": "claude-code", "name": "alpha", "as": "bad name!"},
		{"source": "claude-code", "name": "beta", "as": "beta2", "config": {"timeout_seconds": -1}},
		{"source": "builtin", "name": "github", "as": "gh", "config": {"url": "not a url"}}
	]}`
	a := api.do("POST", "/api/mcp/catalog/apply", body).want(t, http.StatusOK)
	var res CatalogApply
	a.decode(t, &res)
	want := []struct{ status, server, field string }{
		{ApplyAdded, "alpha", ""},
		{ApplyAdded, "gamma-project", ""},
		{ApplyConflict, "beta", ""},
		{ApplyRefused, "gamma", "file"},
		{ApplyRefused, "nope", "name"},
		{ApplyRefused, "alpha", "source"},
		{ApplyRefused, "bad name!", "as"},
		{ApplyRefused, "beta2", "timeout_seconds"},
		{ApplyRefused, "gh", "url"},
	}
	if len(res.Results) != len(want) {
		t.Fatalf("%d results: %s", len(res.Results), a.body)
	}
	for i, w := range want {
		r := res.Results[i]
		if r.Status != w.status || r.Server != w.server || r.Field != w.field || (r.Status != ApplyAdded) != (r.Error != "") || (r.Status == ApplyAdded) != (r.Entry != nil) {
			t.Errorf("result %d = %+v, want %s %s field %q", i, r, w.status, w.server, w.field)
		}
	}
	if !strings.HasSuffix(res.Results[1].File, ".mcp.json") || !strings.HasSuffix(res.Results[0].File, ".claude.json") {
		t.Errorf("files %q %q", res.Results[0].File, res.Results[1].File)
	}
	if n := len(rt.config.Load().Servers); n != before+2 {
		t.Errorf("%d servers after the apply, want %d", n, before+2)
	}
	answers := []string{string(a.body)}
	for _, name := range []string{"alpha", "gamma-project"} {
		d := api.waitState(name, status.Ready)
		if d.ToolCount == 0 || len(d.Tools) == 0 {
			t.Errorf("%s ready without tools", name)
		}
		raw := api.do("GET", "/api/mcp/servers/"+name, "").want(t, http.StatusOK)
		answers = append(answers, string(raw.body))
	}
	if got := mustCall(t, rt, "alpha__env", map[string]any{"name": "TOKEN"}).Content[0].Text; got != refSecret {
		t.Errorf("alpha's TOKEN is not the expanded reference")
	}
	if got := mustCall(t, rt, "gamma-project__env", map[string]any{"name": "WHERE"}).Content[0].Text; got != "project" {
		t.Errorf("gamma-project's WHERE = %q: not the project entry", got)
	}
	d := api.entry("alpha")
	if d.Env["TOKEN"] != (config.SecretView{HasValue: true, Reference: "${GITHUB_TOKEN}"}) || d.Env["LITERAL"].Masked != config.Mask(catalogSecret) {
		t.Errorf("alpha's env in the API: %+v", d.Env)
	}
	file := string(readConfig(t, rt))
	if !strings.Contains(file, `"TOKEN": "${GITHUB_TOKEN}"`) || !strings.Contains(file, `"EXTRA": "${GITHUB_TOKEN}"`) || strings.Contains(file, refSecret) {
		t.Errorf("the file does not keep the references")
	}
	for _, path := range []string{"/api/mcp/servers", "/api/mcp/catalog", "/api/mcp/catalog/diff?source=claude-code"} {
		answers = append(answers, string(api.do("GET", path, "").want(t, http.StatusOK).body))
	}
	// Applied, alpha is the same as its catalog entry.
	rows := diffRows(t, api.do("GET", "/api/mcp/catalog/diff?source=claude-code", "").want(t, http.StatusOK))
	if rows["alpha"].Status != DiffSame {
		t.Errorf("alpha after the apply: %+v", rows["alpha"])
	}
	wantNoCatalogSecret(t, rt, answers...)
}

// A request that is not a list of entries is refused as a whole.
func TestCatalogApplyBadRequest(t *testing.T) {
	rt, api := startCatalog(t)
	for body, field := range map[string]string{
		`{}`:                                   "entries",
		`{"entries": []}`:                      "entries",
		`{"entries": [{"name": 1}]}`:           "entries[0].name",
		`{"entries": [{"name": "a", "x": 1}]}`: "entries[0].x",
	} {
		if e := api.do("POST", "/api/mcp/catalog/apply", body).want(t, http.StatusBadRequest).apiError(t); e.Field != field {
			t.Errorf("%s: field %q, want %q", body, e.Field, field)
		}
	}
	if len(rt.config.Load().Servers) != 0 {
		t.Error("a refused request added a server")
	}
}
