package runtime

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/openprogram/mcpvisor/catalog"
	"github.com/openprogram/mcpvisor/config"
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

// A candidate that AddServer would refuse is invalid, with the field's
// error, not an add.
func TestCatalogDiffInvalidConfig(t *testing.T) {
	_, api := startCatalog(t)
	body := `{"entries": [{"name": "x", "config": {}}, {"name": "y", "config": {"type": "local"}}, {"name": "z", "config": {"type": "http", "url": "ftp://nope"}}, {"name": "ok", "config": {"type": "local", "command": ["x"]}}]}`
	rows := diffRows(t, api.do("POST", "/api/mcp/catalog/diff", body).want(t, http.StatusOK))
	for name, field := range map[string]string{"x": "type", "y": "command", "z": "url"} {
		if r := rows[name]; r.Status != DiffInvalid || !strings.Contains(r.Error, field) {
			t.Errorf("%s = %+v, want invalid naming %s", name, r, field)
		}
	}
	if rows["ok"].Status != DiffAdd {
		t.Errorf("ok = %+v, want add", rows["ok"])
	}
}

// An entry under a host's name that mcpvisor does not accept is read
// under a stand-in; its errors name the field, never the stand-in.
func TestCatalogErrorsNameNoStandIn(t *testing.T) {
	_, err := entryServer("bad name!", []byte(`{"type": 1}`))
	if err == nil || strings.Contains(err.Error(), "servers.entry") || !strings.HasPrefix(err.Error(), "type: ") {
		t.Errorf("entryServer: %v", err)
	}
	if _, err := entryServer("good", []byte(`{"type": 1}`)); err == nil || !strings.HasPrefix(err.Error(), "servers.good.type: ") {
		t.Errorf("entryServer under a valid name: %v", err)
	}
	_, api := startCatalog(t)
	a := api.do("POST", "/api/mcp/catalog/diff", `{"entries": [{"name": "bad name!", "config": {"type": 1}}, {"name": "entry", "config": [1]}]}`).want(t, http.StatusOK)
	rows := diffRows(t, a)
	if r := rows["bad name!"]; r.Status != DiffInvalid || !strings.Contains(r.Error, "type") || strings.Contains(string(a.body), "servers.entry.") {
		t.Errorf("bad name! = %+v in %s", r, a.body)
	}
}

// Spellings that mean the same are no change: an auth of kind none
// against none, a default written out, ${env:X} for ${X}; a different
// value is still named.
func TestDiffEquivalentSpellingsSame(t *testing.T) {
	cur, err := config.Parse([]byte(`{"servers": {
		"a": {"type": "http", "url": "https://x.example/mcp"},
		"b": {"type": "local", "command": ["x", "${env:ARG}"], "env": {"K": "${TOK}", "D": "${env:D:-d}"}},
		"c": {"type": "local", "command": ["x"], "enabled": true, "timeout_seconds": 60}}}`))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, config string
		want         []string
	}{
		{"a", `{"type": "http", "url": "https://x.example/mcp", "auth": {"kind": "none"}}`, nil},
		{"a", `{"type": "http", "url": "https://x.example/mcp", "timeout_seconds": 30, "max_output_bytes": 262144, "max_media_bytes": 5242880}`, nil},
		{"a", `{"type": "http", "url": "https://x.example/mcp", "timeout_seconds": 31}`, []string{"timeout_seconds"}},
		{"a", `{"type": "http", "url": "https://x.example/mcp", "auth": {"kind": "bearer", "token": "${T}"}}`, []string{"auth.kind", "auth.token"}},
		{"b", `{"type": "local", "command": ["x", "${ARG}"], "env": {"K": "${env:TOK}", "D": "${D:-d}"}}`, nil},
		{"b", `{"type": "local", "command": ["x", "${ARG}"], "env": {"K": "secret-literal-value", "D": "${D:-d}"}}`, []string{"env.K"}},
		{"b", `{"type": "local", "command": ["x", "${ARG}"], "env": {"K": "${TOK}", "D": "${D:-e}"}}`, []string{"env.D"}},
		{"c", `{"type": "local", "command": ["x"], "timeout_seconds": 60, "connect_timeout_seconds": 60}`, nil},
		{"c", `{"type": "local", "command": ["x"], "timeout_seconds": 60, "connect_timeout_seconds": 30}`, []string{"connect_timeout_seconds"}},
	}
	for _, c := range cases {
		d := DiffCatalog(cur, []catalog.Entry{{Name: c.name, Config: json.RawMessage(c.config)}}, nil)
		row := d.Servers[0]
		wantStatus := DiffSame
		if c.want != nil {
			wantStatus = DiffChange
		}
		if row.Status != wantStatus || !slices.Equal(row.Fields, nonNil(c.want)) {
			t.Errorf("%s %s: %s %v (%s), want %s %v", c.name, c.config, row.Status, row.Fields, row.Error, wantStatus, c.want)
		}
	}
}
