package runtime

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/status"
)

// registered lists the registry names of server's tools, app-only ones
// included, sorted.
func registered(rt *testRuntime, server string) []string {
	var out []string
	for _, t := range rt.Registry().ServerTools(server) {
		out = append(out, t.Name)
	}
	slices.Sort(out)
	return out
}

// Allow and deny globs over the server's own tool names (G1): only what
// allow matches and deny does not is registered — the resource and
// prompt tools count as the server's, by their names — deny wins, the
// rest cannot be called by name (Go or HTTP), status and the server
// entry count them, and a re-listing after list_changed is filtered the
// same way.
func TestToolFilterAllowDeny(t *testing.T) {
	filtered := exampleServer("ex", "-change-tool")
	filtered.Tools = config.ToolFilter{Allow: []string{"e*", "add", "change", "read_resource"}, Deny: []string{"env", "extra_2"}}
	rt := start(t, Options{}, exampleServer("all", "-change-tool"), filtered)
	sub := rt.Subscribe(events.SubscribeOptions{Server: "ex", From: 1})
	defer sub.Close()
	rt.waitReady(t, "all")
	st := rt.waitReady(t, "ex")

	want := []string{"ex__add", "ex__change", "ex__echo", "ex__read_resource"}
	if got := registered(rt, "ex"); !slices.Equal(got, want) {
		t.Fatalf("registered %v, want %v", got, want)
	}
	all := mustStatus(t, rt, "all")
	if st.ToolCount != len(want) || st.ToolCount+st.ToolsFiltered != all.ToolCount || all.ToolsFiltered != 0 {
		t.Errorf("ex counts %d tools and %d filtered, all %d and %d: want %d registered and the rest of all's filtered",
			st.ToolCount, st.ToolsFiltered, all.ToolCount, all.ToolsFiltered, len(want))
	}
	api := newAPI(t, rt)
	if e := api.entry("ex"); e.ToolsFiltered != st.ToolsFiltered || e.ToolCount != st.ToolCount || len(e.Tools) != len(want) {
		t.Errorf("server entry: %d tools (%d listed), %d filtered; want %d and %d", e.ToolCount, len(e.Tools), e.ToolsFiltered, st.ToolCount, st.ToolsFiltered)
	}

	// Deny wins over allow ("env" matches "e*"), and what is not allowed
	// is not there: each is an unknown tool, by name and over HTTP.
	for _, name := range []string{"ex__env", "ex__sleep", "ex__list_resources", "ex__list_prompts"} {
		if _, err := rt.CallTool(context.Background(), name, map[string]any{}); !errors.Is(err, ErrUnknownTool) {
			t.Errorf("calling filtered %s: %v, want ErrUnknownTool", name, err)
		}
		api.do("POST", "/api/mcp/tools/"+name+"/call", `{"arguments":{}}`).want(t, http.StatusNotFound)
	}
	if res := mustCall(t, rt, "ex__echo", map[string]any{"text": "hi"}); res.IsError {
		t.Errorf("echo = %+v", res)
	}

	// list_changed: extra_1 matches "e*" and is registered; extra_2 is
	// denied, so only the filtered count moves.
	mustCall(t, rt, "ex__change", map[string]any{"list": "tools"})
	testutil.Await(t, sub, eventsWait, "extra_1 registered", func(e events.ToolsChanged) bool {
		return slices.Equal(e.Added, []string{"ex__extra_1"}) && e.Filtered == st.ToolsFiltered
	})
	mustCall(t, rt, "ex__change", map[string]any{"list": "tools"})
	testutil.Await(t, sub, eventsWait, "extra_2 filtered out", func(e events.ToolsChanged) bool {
		return len(e.Added) == 0 && e.Filtered == st.ToolsFiltered+1 && e.Count == len(want)+1
	})
	if _, err := rt.CallTool(context.Background(), "ex__extra_2", map[string]any{"text": "x"}); !errors.Is(err, ErrUnknownTool) {
		t.Errorf("calling denied extra_2: %v, want ErrUnknownTool", err)
	}
	if got := mustStatus(t, rt, "ex"); got.ToolsFiltered != st.ToolsFiltered+1 || got.ToolCount != len(want)+1 {
		t.Errorf("after the re-listings: %d tools, %d filtered", got.ToolCount, got.ToolsFiltered)
	}
}

// A PATCH of the tools filter re-filters the running session's tool list
// without a restart (same process, no restart counted), is saved, and
// holds for a tool value a host kept from before: it can no longer reach
// the server. Lifting the filter brings the tool back, again in place.
func TestToolFilterPatchInPlace(t *testing.T) {
	rt := start(t, Options{}, exampleServer("ex"))
	before := rt.waitReady(t, "ex")
	kept, ok := rt.Registry().Get("ex__env")
	if !ok {
		t.Fatal("ex__env not registered")
	}
	api := newAPI(t, rt)

	api.do("PATCH", "/api/mcp/servers/ex", `{"tools":{"deny":["env","s*"]}}`).want(t, http.StatusOK)
	st := mustStatus(t, rt, "ex")
	names := registered(rt, "ex")
	if slices.Contains(names, "ex__env") || slices.Contains(names, "ex__sleep") || !slices.Contains(names, "ex__echo") {
		t.Errorf("after the PATCH: %v", names)
	}
	if st.PID != before.PID || st.Restarts != before.Restarts || st.State != status.Ready {
		t.Errorf("the PATCH restarted the server: %+v, was pid %d", st, before.PID)
	}
	if st.ToolsFiltered != 4 || st.ToolCount != before.ToolCount-4 { // env, sleep, stderr, schema
		t.Errorf("%d tools, %d filtered; before %d tools", st.ToolCount, st.ToolsFiltered, before.ToolCount)
	}
	if _, err := kept.Execute(context.Background(), map[string]any{}); !errors.Is(err, ErrUnknownTool) {
		t.Errorf("a kept tool value of a now filtered tool: %v, want ErrUnknownTool", err)
	}
	if !strings.Contains(string(readConfig(t, rt)), `"deny"`) {
		t.Errorf("the filter was not saved: %s", readConfig(t, rt))
	}

	api.do("PATCH", "/api/mcp/servers/ex", `{"tools":{"deny":[]}}`).want(t, http.StatusOK)
	st = mustStatus(t, rt, "ex")
	if st.ToolsFiltered != 0 || st.ToolCount != before.ToolCount || st.PID != before.PID {
		t.Errorf("after lifting the filter: %+v", st)
	}
	if _, err := kept.Execute(context.Background(), map[string]any{}); err != nil {
		t.Errorf("the kept tool value once the filter is lifted: %v", err)
	}
}

// A bad glob is refused with a 400 naming the field, on POST and PATCH,
// and changes nothing.
func TestToolFilterBadGlob(t *testing.T) {
	rt := start(t, Options{}, exampleServer("ex"))
	rt.waitReady(t, "ex")
	api := newAPI(t, rt)
	before := readConfig(t, rt)

	body := exampleBody(t, "new", map[string]any{"tools": map[string]any{"allow": []string{"[a-"}}})
	if e := api.do("POST", "/api/mcp/servers", body).want(t, http.StatusBadRequest).apiError(t); !strings.Contains(e.Error, "tools.allow[0]") {
		t.Errorf("POST with a bad glob: %q, want it to name tools.allow[0]", e.Error)
	}
	if e := api.do("PATCH", "/api/mcp/servers/ex", `{"tools":{"deny":["ok","x[" ]}}`).want(t, http.StatusBadRequest).apiError(t); !strings.Contains(e.Error, "tools.deny[1]") {
		t.Errorf("PATCH with a bad glob: %q, want it to name tools.deny[1]", e.Error)
	}
	if after := readConfig(t, rt); string(after) != string(before) {
		t.Errorf("a refused change changed the file:\n%s\nwas\n%s", after, before)
	}
	if slices.Contains(api.names(), "new") {
		t.Error("the refused POST added its server")
	}
}

// A reload that finds only the tools filter changed updates the running
// session in place (the same process) (reported as updated, not restarted); one that also
// changes the command restarts it.
func TestToolFilterReloadInPlace(t *testing.T) {
	srv := exampleServer("ex")
	rt := start(t, Options{}, srv)
	before := rt.waitReady(t, "ex")

	srv.Tools = config.ToolFilter{Deny: []string{"env"}}
	testutil.WriteConfig(t, rt.dir, srv)
	res, err := rt.Reload(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Updated, []string{"ex"}) || len(res.Restarted) != 0 {
		t.Errorf("reload = %+v, want ex updated, nothing restarted", res)
	}
	// A reload answers at once (a restart it starts is not waited for
	// either); the change shows with the next tools_changed.
	// The registry changes before the status board applies the
	// tools_changed event: wait for both.
	rt.awaitCatalog(t, "ex", "env filtered out", func() bool {
		st, _ := rt.board.Get("ex")
		return !slices.Contains(registered(rt, "ex"), "ex__env") && st.ToolsFiltered == 1
	})
	st := mustStatus(t, rt, "ex")
	if st.PID != before.PID || st.ToolsFiltered != 1 || st.Restarts != 0 {
		t.Errorf("after the reload: %+v, tools %v", st, registered(rt, "ex"))
	}

	srv.Command = append(srv.Command, "-change-tool")
	testutil.WriteConfig(t, rt.dir, srv)
	if res, err = rt.Reload(t.Context()); err != nil || !slices.Equal(res.Restarted, []string{"ex"}) || len(res.Updated) != 0 {
		t.Errorf("reload of a new command = %+v, %v; want ex restarted", res, err)
	}
	st = rt.waitBack(t, "ex")
	if st.ToolsFiltered != 1 || !slices.Contains(registered(rt, "ex"), "ex__change") {
		t.Errorf("after the restart: %+v, tools %v", st, registered(rt, "ex"))
	}
}

// A server whose file entry has a bad glob fails with invalid_config; a
// PATCH that fixes the filter starts it (a restart, not an in-place
// update of a server that never ran), and a reload that brings a bad
// glob back fails it again rather than running on half a filter.
func TestToolFilterBadGlobInFileFixedByPatch(t *testing.T) {
	srv := exampleServer("ex")
	srv.Tools = config.ToolFilter{Allow: []string{"[a-"}}
	rt := start(t, Options{}, srv)
	if st := rt.waitSettled(t, "ex"); st.State != status.Failed || st.ErrorKind != status.KindInvalidConfig || !strings.Contains(st.Error, "tools.allow[0]") {
		t.Fatalf("ex = %+v, want failed for tools.allow[0]", st)
	}
	api := newAPI(t, rt)
	api.do("PATCH", "/api/mcp/servers/ex", `{"tools":{"allow":["e*"]}}`).want(t, http.StatusOK)
	if st := rt.waitReady(t, "ex"); st.ToolCount != len(registered(rt, "ex")) || !slices.Contains(registered(rt, "ex"), "ex__echo") {
		t.Errorf("after the fix: %+v, tools %v", st, registered(rt, "ex"))
	}

	srv.Tools = config.ToolFilter{Deny: []string{"x["}}
	testutil.WriteConfig(t, rt.dir, srv)
	if res, err := rt.Reload(t.Context()); err != nil || !slices.Equal(res.Restarted, []string{"ex"}) {
		t.Errorf("reload of a bad glob = %+v, %v; want ex restarted (and failed)", res, err)
	}
	// The reload answers before the restart it starts: wait for the end.
	if st := rt.waitFor(t, "ex", status.Failed); st.ErrorKind != status.KindInvalidConfig || len(registered(rt, "ex")) != 0 {
		t.Errorf("after reloading a bad glob: %+v, tools %v", st, registered(rt, "ex"))
	}
}
