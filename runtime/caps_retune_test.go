package runtime

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/status"
)

// A PATCH that changes only the output caps registers nothing: the
// registry keeps its version and no tools_changed goes out (hosts would
// resend their tool lists for nothing); the next filter change is the
// first tools_changed. A PATCH answers once the actor took the change on,
// so the version is checked right after it.
func TestCapsOnlyPatchRegistersNothing(t *testing.T) {
	rt := start(t, Options{}, exampleServer("ex", "-sized-tools"))
	rt.waitReady(t, "ex")
	sub := rt.Subscribe(events.SubscribeOptions{Server: "ex"})
	defer sub.Close()
	version := rt.Registry().Version()
	api := newAPI(t, rt)

	api.do("PATCH", "/api/mcp/servers/ex", `{"max_output_bytes":2048,"max_media_bytes":4096}`).want(t, http.StatusOK)
	if got := rt.Registry().Version(); got != version {
		t.Errorf("a caps-only PATCH moved the registry from version %d to %d", version, got)
	}
	if tr, cut := truncationOf(t, mustCall(t, rt, "ex__sized", map[string]any{"text_bytes": 4096})); !cut || tr.TextShown != 2048 {
		t.Errorf("the new cap does not hold: %+v (%v)", tr, cut)
	}
	api.do("PATCH", "/api/mcp/servers/ex", `{"tools":{"deny":["env"]}}`).want(t, http.StatusOK)
	first := testutil.Await[events.ToolsChanged](t, sub, eventsWait, "the filter's tools_changed", nil)
	if first.Filtered != 1 || !slices.Equal(first.Removed, []string{"ex__env"}) {
		t.Errorf("first tools_changed after the caps-only PATCH = %v, want the filter's", first)
	}
}

// In a PATCH, 0 puts a limit back to its default: the cap holds again at
// 256 KiB, the entry shows the defaults, and the file no longer has the
// fields. The file and POST still refuse 0.
func TestPatchZeroPutsBackTheDefaults(t *testing.T) {
	srv := exampleServer("ex", "-sized-tools")
	srv.MaxOutputBytes, srv.MaxMediaBytes, srv.ConnectTimeoutSeconds, srv.MaxCallSeconds = 2048, config.NoCap, 90, 900
	rt := start(t, Options{}, srv)
	rt.waitReady(t, "ex")
	api := newAPI(t, rt)

	api.do("PATCH", "/api/mcp/servers/ex", `{"max_output_bytes":0,"max_media_bytes":0}`).want(t, http.StatusOK)
	tr, cut := truncationOf(t, mustCall(t, rt, "ex__sized", map[string]any{"text_bytes": 300 << 10}))
	if !cut || tr.MaxOutputBytes != config.DefaultMaxOutputBytes || tr.TextShown != config.DefaultMaxOutputBytes {
		t.Errorf("after PATCH 0: %+v (%v), want the default cap", tr, cut)
	}
	api.do("PATCH", "/api/mcp/servers/ex", `{"connect_timeout_seconds":0,"max_call_seconds":0,"timeout_seconds":20}`).want(t, http.StatusOK)
	e := api.entry("ex")
	if e.MaxOutputBytes != config.DefaultMaxOutputBytes || e.MaxMediaBytes != config.DefaultMaxMediaBytes ||
		e.ConnectTimeoutSeconds != 20 || e.MaxCallSeconds != 200 {
		t.Errorf("entry after PATCH 0: output %d, media %d, connect %d, max call %d; want the defaults (connect and max call from timeout_seconds 20)",
			e.MaxOutputBytes, e.MaxMediaBytes, e.ConnectTimeoutSeconds, e.MaxCallSeconds)
	}
	file := string(readConfig(t, rt))
	for _, key := range []string{"max_output_bytes", "max_media_bytes", "connect_timeout_seconds", "max_call_seconds"} {
		if strings.Contains(file, key) {
			t.Errorf("%s still in the file after PATCH 0:\n%s", key, file)
		}
	}
	body := exampleBody(t, "new", map[string]any{"max_output_bytes": 0})
	if e := api.do("POST", "/api/mcp/servers", body).want(t, http.StatusBadRequest).apiError(t); !strings.Contains(e.Error, "max_output_bytes") {
		t.Errorf("POST with max_output_bytes 0: %q, want an error naming the field", e.Error)
	}
}

// A reload that changes only the caps is reported as updated, restarts
// nothing, and holds for the next call.
func TestCapsOnlyReloadInPlace(t *testing.T) {
	srv := exampleServer("ex", "-sized-tools")
	rt := start(t, Options{}, srv)
	before := rt.waitReady(t, "ex")

	srv.MaxOutputBytes = 2048
	testutil.WriteConfig(t, rt.dir, srv)
	res, err := rt.Reload(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Updated, []string{"ex"}) || len(res.Restarted) != 0 {
		t.Errorf("reload = %+v, want ex updated, nothing restarted", res)
	}
	// A reload does not wait for the actor; a PATCH does, and the actor
	// takes the two on in order.
	newAPI(t, rt).do("PATCH", "/api/mcp/servers/ex", `{"max_media_bytes":4096}`).want(t, http.StatusOK)
	if tr, cut := truncationOf(t, mustCall(t, rt, "ex__sized", map[string]any{"text_bytes": 4096})); !cut || tr.TextShown != 2048 {
		t.Errorf("after the reload: %+v (%v), want the 2048 cap", tr, cut)
	}
	if st := mustStatus(t, rt, "ex"); st.PID != before.PID || st.Restarts != 0 || st.State != status.Ready {
		t.Errorf("the reload restarted the server: %+v", st)
	}
}

// A structured result larger than the cap that fails its output schema:
// the explanation of the mismatch comes first and survives the cut.
func TestBigStructuredMismatchSurvivesTheCut(t *testing.T) {
	srv := exampleServer("ex", "-result-tools")
	srv.MaxOutputBytes = 2048
	rt := start(t, Options{}, srv)
	rt.waitReady(t, "ex")
	res := mustCall(t, rt, "ex__structured_broken", map[string]any{"text": strings.Repeat("y", 8000)})
	tr, cut := truncationOf(t, res)
	if !res.IsError || !cut || res.StructuredContent != nil || !strings.Contains(res.Content[0].Text, "/properties/n") {
		t.Fatalf("big structured_broken = error %v, cut %v, first block %.200q", res.IsError, cut, res.Content[0].Text)
	}
	if tr.TextShown > 2048 || tr.TextBytes <= 8000 {
		t.Errorf("truncation %+v", tr)
	}
}
