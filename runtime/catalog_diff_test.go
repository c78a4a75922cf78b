package runtime

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// diffRows indexes a diff answer by name and file.
func diffRows(t *testing.T, a apiAnswer) map[string]DiffServer {
	t.Helper()
	var d CatalogDiff
	a.decode(t, &d)
	rows := map[string]DiffServer{}
	for _, s := range d.Servers {
		key := s.Name
		if strings.HasSuffix(s.File, ".mcp.json") {
			key += " project"
		}
		rows[key] = s
	}
	return rows
}

// The diff of a source against the running config: add, change (the
// changed fields by name, secrets only as changed), same and conflict,
// each row telling its file; nothing in it is a value.
func TestCatalogSourceDiff(t *testing.T) {
	alpha := exampleServer("alpha")
	alpha.Env["TOKEN"] = "${OTHER_TOKEN}"
	gamma := exampleServer("gamma", "-apps")
	gamma.Enabled = false
	rt, api := startCatalog(t, alpha, exampleServer("beta"), gamma)
	a := api.do("GET", "/api/mcp/catalog/diff?source=claude-code", "").want(t, http.StatusOK)
	rows := diffRows(t, a)
	want := map[string]struct {
		status string
		fields []string
	}{
		"alpha":         {DiffChange, []string{"env.LITERAL", "env.TOKEN"}},
		"beta":          {DiffSame, []string{}},
		"gamma":         {DiffConflict, []string{"command", "enabled", "env.WHERE"}},
		"gamma project": {DiffConflict, []string{"command", "enabled", "env.WHERE"}},
	}
	if len(rows) != len(want) {
		t.Errorf("rows %+v", rows)
	}
	for k, w := range want {
		if r := rows[k]; r.Status != w.status || !slices.Equal(r.Fields, w.fields) || r.Source != "claude-code" || r.File == "" {
			t.Errorf("%s = %+v, want %s %q", k, r, w.status, w.fields)
		}
	}
	cursor := diffRows(t, api.do("GET", "/api/mcp/catalog/diff?source=cursor", "").want(t, http.StatusOK))
	if r := cursor["remote"]; r.Status != DiffAdd {
		t.Errorf("remote = %+v, want add", r)
	}
	for _, q := range []string{"", "?source=nope", "?source=cursor&x=1"} {
		if e := api.do("GET", "/api/mcp/catalog/diff"+q, "").want(t, http.StatusBadRequest).apiError(t); e.Field == "" {
			t.Errorf("%q: error names no field: %+v", q, e)
		}
	}
	wantNoCatalogSecret(t, rt, string(a.body))
}

// A candidate of entries, of a host's file, or of an mcpvisor file is
// diffed the same way; a bad candidate is a 400 naming the field.
func TestCatalogCandidateDiff(t *testing.T) {
	rt, api := startCatalog(t, exampleServer("beta"))
	beta, _ := json.Marshal(map[string]any{"type": "local", "command": []string{demoBin, "serve"}, "env": map[string]string{"MCPVISOR_TEST_MARKER": marker, "K": catalogSecret}})
	body, _ := json.Marshal(map[string]any{"entries": []map[string]any{
		{"name": "beta", "config": json.RawMessage(beta)},
		{"name": "new", "config": json.RawMessage(`{"type": "http", "url": "https://x.example/mcp"}`)},
		{"name": "bad name!", "config": json.RawMessage(`{"type": "http", "url": "https://x.example/mcp"}`)},
	}})
	a := api.do("POST", "/api/mcp/catalog/diff", string(body)).want(t, http.StatusOK)
	rows := diffRows(t, a)
	if r := rows["beta"]; r.Status != DiffChange || !slices.Equal(r.Fields, []string{"env.K"}) || r.File != "candidate" {
		t.Errorf("beta = %+v", r)
	}
	if rows["new"].Status != DiffAdd || rows["bad name!"].Status != DiffInvalid || rows["bad name!"].Error == "" {
		t.Errorf("rows = %+v", rows)
	}
	answers := []string{string(a.body)}

	desktop, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"beta": map[string]any{"command": demoBin, "args": []string{"serve"}, "env": map[string]string{"MCPVISOR_TEST_MARKER": marker}},
		"gh":   map[string]any{"command": "gh-mcp", "env": map[string]string{"GH": catalogSecret2}},
	}})
	for format, content := range map[string]string{
		"claude-desktop": string(desktop),
		"mcpvisor":       `{"servers": {"beta": {"type": "local", "command": ["` + demoBin + `", "serve"], "env": {"MCPVISOR_TEST_MARKER": "` + marker + `"}}, "gh": {"type": "local", "command": ["gh-mcp"], "env": {"GH": "` + catalogSecret2 + `"}}}}`,
	} {
		req, _ := json.Marshal(map[string]string{"format": format, "content": content})
		a := api.do("POST", "/api/mcp/catalog/diff", string(req)).want(t, http.StatusOK)
		rows := diffRows(t, a)
		if rows["beta"].Status != DiffSame || rows["gh"].Status != DiffAdd || len(rows) != 2 {
			t.Errorf("%s: rows %+v", format, rows)
		}
		answers = append(answers, string(a.body))
	}
	for body, field := range map[string]string{
		`{"format": "builtin", "content": "{}"}`:             "format",
		`{"format": "word", "content": "{}"}`:                "format",
		`{"format": "mcpvisor", "content": "{"}`:             "content",
		`{"entries": [{"name": "x"}]}`:                       "entries[0]",
		`{"entries": [{"name": "x", "config": {}, "y": 1}]}`: "entries[0].y",
		`{"entries": [], "format": "mcpvisor"}`:              "format",
		`{"other": 1}`:                                       "other",
	} {
		a := api.do("POST", "/api/mcp/catalog/diff", body).want(t, http.StatusBadRequest)
		if e := a.apiError(t); e.Field != field {
			t.Errorf("%s: field %q, want %q (%s)", body, e.Field, field, e.Error)
		}
	}
	if got := rt.config.Load().Servers; len(got) != 1 {
		t.Errorf("a diff changed the config: %d servers", len(got))
	}
	wantNoCatalogSecret(t, rt, answers...)
}
