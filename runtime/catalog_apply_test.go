package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/internal/testutil"
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

// A request that ends part-way through an apply: the entries not yet
// tried are skipped and absent from the config; the one handed to the
// manager is reported by its outcome (added), never as refused.
func TestCatalogApplyContextEnds(t *testing.T) {
	rt, _ := startCatalog(t)
	ctx := &endsAfter{Context: context.Background(), done: make(chan struct{})}
	close(ctx.done)
	ctx.live.Store(3) // readCatalog's two checks and the first entry's
	var entries []ApplyEntry
	for _, as := range []string{"a1", "a2", "a3"} {
		entries = append(entries, ApplyEntry{Source: "claude-code", Name: "beta", As: as})
	}
	res, err := rt.ApplyCatalog(ctx, entries)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{ApplyAdded, ApplySkipped, ApplySkipped}
	for i, r := range res.Results {
		_, configured := rt.config.Load().Get(r.Server)
		if r.Status != want[i] || configured != (r.Status == ApplyAdded) {
			t.Errorf("%s: %+v, configured %v; want %s", r.Server, r, configured, want[i])
		}
	}
}

// An operation whose context has ended is not sent to the manager: the
// add that follows it, answered in order, finds it absent.
func TestAddServerEndedContextSendsNothing(t *testing.T) {
	rt, _ := startCatalog(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := rt.AddServer(ctx, exampleServer("never")); !errors.Is(err, context.Canceled) {
		t.Fatalf("AddServer with an ended context: %v", err)
	}
	if _, err := rt.AddServer(context.Background(), exampleServer("after")); err != nil {
		t.Fatal(err)
	}
	if _, ok := rt.config.Load().Get("never"); ok {
		t.Error("the add of an ended context was carried out")
	}
}

// More than MaxApplyEntries entries are refused as a whole, naming
// "entries", by apply and by POST diff.
func TestCatalogEntriesCap(t *testing.T) {
	_, api := startCatalog(t)
	var apply, diff []string
	for range MaxApplyEntries + 1 {
		apply = append(apply, `{"source": "builtin", "name": "fetch"}`)
		diff = append(diff, `{"name": "x", "config": {"command": ["x"]}}`)
	}
	for path, body := range map[string]string{
		"/api/mcp/catalog/apply": `{"entries": [` + strings.Join(apply, ",") + `]}`,
		"/api/mcp/catalog/diff":  `{"entries": [` + strings.Join(diff, ",") + `]}`,
	} {
		if e := api.do("POST", path, body).want(t, http.StatusBadRequest).apiError(t); e.Field != "entries" {
			t.Errorf("%s: field %q, want entries", path, e.Field)
		}
	}
}

// endsAfter is a context whose Done is closed from the start and whose
// Err turns non-nil after live calls: the deadline passes while an apply
// runs, at a point the test chooses.
type endsAfter struct {
	context.Context
	live atomic.Int32
	done chan struct{}
}

func (c *endsAfter) Done() <-chan struct{} { return c.done }

func (c *endsAfter) Err() error {
	if c.live.Add(-1) < 0 {
		return context.DeadlineExceeded
	}
	return nil
}

// An entry added and then removed by another request before the apply
// answer is built is reported added (it was), without an entry; the
// entry after it is added and shown as usual.
func TestCatalogApplyRemovedMeanwhile(t *testing.T) {
	rt, api := startCatalog(t)
	rt.apply.add = func(ctx context.Context, s config.Server) error {
		if err := rt.addOperation(ctx, s); err != nil || s.Name != "a1" {
			return err
		}
		// Another request's DELETE, carried out between the manager's
		// answer and the apply's lookup.
		return rt.RemoveServer(ctx, s.Name)
	}
	a := api.do("POST", "/api/mcp/catalog/apply", `{"entries": [
		{"source": "claude-code", "name": "beta", "as": "a1"},
		{"source": "claude-code", "name": "beta", "as": "a2"}]}`).want(t, http.StatusOK)
	var res CatalogApply
	a.decode(t, &res)
	if len(res.Results) != 2 {
		t.Fatalf("%d results: %s", len(res.Results), a.body)
	}
	if r := res.Results[0]; r.Status != ApplyAdded || r.Error != "" || r.Entry != nil {
		t.Errorf("the entry removed meanwhile: %+v, want added without an entry", r)
	}
	if r := res.Results[1]; r.Status != ApplyAdded || r.Entry == nil || r.Entry.Name != "a2" {
		t.Errorf("the next entry: %+v, want added with its entry", r)
	}
	if _, ok := rt.config.Load().Get("a1"); ok {
		t.Error("a1 is still configured")
	}
}

// The warnings of the entry applied, what of the host's entry did not
// carry over, are in its result as the listing shows them, without the
// value of the dropped field.
func TestCatalogApplyWarnings(t *testing.T) {
	rt, api := startCatalog(t)
	mcp := `{"mcpServers": {"delta": {"command": ` + quoteJSON(t, demoBin) + `, "args": ["serve"],
		"env": {"` + testutil.MarkerEnv + `": ` + quoteJSON(t, marker) + `}, "headersHelper": "/bin/helper ` + catalogSecret + `"}}}`
	if err := os.WriteFile(filepath.Join(rt.opts.Projects[0], ".mcp.json"), []byte(mcp), 0o600); err != nil {
		t.Fatal(err)
	}
	var list CatalogList
	listing := api.do("GET", "/api/mcp/catalog", "").want(t, http.StatusOK)
	listing.decode(t, &list)
	var listed []string
	for _, e := range list.Entries {
		if e.Source == "claude-code" && e.Name == "delta" {
			listed = e.Warnings
		}
	}
	if len(listed) != 1 || !strings.Contains(listed[0], "headersHelper") {
		t.Fatalf("delta's warnings in the listing: %q", listed)
	}
	a := api.do("POST", "/api/mcp/catalog/apply", `{"entries": [
		{"source": "claude-code", "name": "delta"},
		{"source": "claude-code", "name": "beta"},
		{"source": "claude-code", "name": "nope"}]}`).want(t, http.StatusOK)
	var res CatalogApply
	a.decode(t, &res)
	if len(res.Results) != 3 {
		t.Fatalf("%d results: %s", len(res.Results), a.body)
	}
	if r := res.Results[0]; r.Status != ApplyAdded || !slices.Equal(r.Warnings, listed) {
		t.Errorf("delta: %+v, want added with warnings %q", r, listed)
	}
	for _, r := range res.Results[1:] {
		if r.Warnings == nil || len(r.Warnings) != 0 {
			t.Errorf("%s: warnings %q, want none", r.Name, r.Warnings)
		}
	}
	if !strings.Contains(string(a.body), `"warnings":[]`) {
		t.Errorf("an entry without warnings does not say so: %s", a.body)
	}
	wantNoCatalogSecret(t, rt, string(listing.body), string(a.body))
}

// quoteJSON is s as a JSON string.
func quoteJSON(t *testing.T, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
