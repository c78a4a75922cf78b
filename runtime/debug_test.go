package runtime

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/status"
)

func TestDebugKillRouteOffByDefault(t *testing.T) {
	rt := start(t, Options{})
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/debug/actors/kill", strings.NewReader(`{"path":"manager/x","how":"stop"}`))
	req.Header.Set("Content-Type", "application/json")
	rt.DebugHandler().ServeHTTP(rec, req)
	if rec.Code != http.StatusNotFound && rec.Code != http.StatusMethodNotAllowed {
		t.Fatalf("kill route without Debug answered %d, want it absent", rec.Code)
	}
}

// Every way of killing a server actor or a session actor, through the
// debug route, ends with the server ready again on a new process, and only
// that process left; the live tree shows the new pid.
func TestDebugKillRecovers(t *testing.T) {
	for _, path := range []string{"manager/ex", "manager/ex/session"} {
		for _, how := range []string{"panic", "stop", "poison"} {
			t.Run(path+"/"+how, func(t *testing.T) {
				rt := start(t, Options{Debug: true, StopGrace: 200 * time.Millisecond}, exampleServer("ex"))
				first := rt.waitSettled(t, "ex")
				sub := rt.subscribe(t, "ex")
				rec := httptest.NewRecorder()
				req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/debug/actors/kill", strings.NewReader(`{"path":"`+path+`","how":"`+how+`"}`))
				req.Header.Set("Content-Type", "application/json")
				rt.DebugHandler().ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					t.Fatalf("kill answered %d: %s", rec.Code, rec.Body)
				}
				started := testutil.Await(t, sub, 20*time.Second, "a new session", func(e events.SessionStarted) bool { return e.PID != first.PID })
				if st := rt.waitFor(t, "ex", status.Ready); st.PID != started.PID || len(rt.Tools()) == 0 {
					t.Fatalf("not recovered on pid %d: %+v (%d tools)", started.PID, st, len(rt.Tools()))
				}
				testutil.Eventually(t, 20*time.Second, "only the new process", func() bool { return len(testutil.ProcessesWithMarker(marker)) == 1 })
				tree, err := rt.ActorTree(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				st, _ := rt.board.Get("ex")
				if len(tree.Children) != 1 || len(tree.Children[0].Children) != 1 || tree.Children[0].Children[0].PID != st.PID {
					t.Fatalf("tree = %+v, want manager/ex/session with pid %d", tree, st.PID)
				}
			})
		}
	}
}

func TestDebugKillBadInput(t *testing.T) {
	rt := start(t, Options{Debug: true}, exampleServer("ex"))
	rt.waitSettled(t, "ex")
	for body, want := range map[string]int{
		`{"path":"manager/ex","how":"explode"}`:        http.StatusBadRequest,
		`{"path":"elsewhere/ex","how":"stop"}`:         http.StatusBadRequest,
		`{"path":"manager/nope","how":"stop"}`:         http.StatusNotFound,
		`{"path":"manager/ex/session/x","how":"stop"}`: http.StatusBadRequest,
	} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/debug/actors/kill", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rt.DebugHandler().ServeHTTP(rec, req)
		if rec.Code != want {
			t.Errorf("%s: %d %s, want %d", body, rec.Code, rec.Body, want)
		}
	}
	if st, _ := rt.board.Get("ex"); st.State != status.Ready {
		t.Fatalf("a refused kill changed the server: %+v", st)
	}
}

// TestHandlerSplit: Handler serves the management API and none of the
// debug routes, even with Debug; DebugHandler serves the debug routes and
// none of the API's.
func TestHandlerSplit(t *testing.T) {
	rt := start(t, Options{Debug: true}, exampleServer("ex"))
	rt.waitSettled(t, "ex")
	api, debug := rt.Handler(), rt.DebugHandler()
	tests := []struct {
		h            http.Handler
		name         string
		method, path string
		code         int
	}{
		{api, "API", "GET", "/healthz", http.StatusOK},
		{api, "API", "GET", "/api/mcp/servers", http.StatusOK},
		{api, "API", "GET", "/debug/actors", http.StatusNotFound},
		{api, "API", "POST", "/debug/actors/kill", http.StatusNotFound},
		{debug, "debug", "GET", "/debug/actors", http.StatusOK},
		{debug, "debug", "OPTIONS", "/debug/actors", http.StatusMethodNotAllowed},
		{debug, "debug", "GET", "/debug/pprof/", http.StatusNotFound},
		{debug, "debug", "GET", "/healthz", http.StatusNotFound},
		{debug, "debug", "GET", "/api/mcp/servers", http.StatusNotFound},
	}
	for _, tt := range tests {
		a := serve(t, tt.h, jsonRequest(tt.method, tt.path, ""))
		if a.code != tt.code {
			t.Errorf("%s handler, %s %s: %d %s, want %d", tt.name, tt.method, tt.path, a.code, a.body, tt.code)
		}
	}
	if st, _ := rt.board.Get("ex"); st.State != status.Ready || st.Restarts != 0 {
		t.Fatalf("a kill sent to Handler reached the server: %+v", st)
	}
}

// TestDebugHandlerGuard: the debug routes have the API's guards: a foreign
// Host, a cross-origin write and a request the runtime itself sent are
// refused, and a refused kill kills nothing.
func TestDebugHandlerGuard(t *testing.T) {
	rt := start(t, Options{Debug: true}, exampleServer("ex"))
	first := rt.waitSettled(t, "ex")
	h := rt.DebugHandler()
	kill := `{"path":"manager/ex","how":"stop"}`
	for name, r := range map[string]apiRequest{
		"foreign Host, read": {method: "GET", path: "/debug/actors", host: "attacker.example:7077"},
		"foreign Host, kill": {method: "POST", path: "/debug/actors/kill", host: "attacker.example:7077", ctype: "application/json", body: kill},
		"cross-origin kill":  {method: "POST", path: "/debug/actors/kill", ctype: "application/json", body: kill, header: map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://attacker.example"}},
		"own request, read":  {method: "GET", path: "/debug/actors", header: map[string]string{"Mcpvisor-Request": "1"}},
		"own request, kill":  {method: "POST", path: "/debug/actors/kill", ctype: "application/json", body: kill, header: map[string]string{"Mcpvisor-Request": "1"}},
	} {
		if a := serve(t, h, r); a.code != http.StatusForbidden {
			t.Errorf("%s: %d %s, want 403", name, a.code, a.body)
		}
	}
	if st, _ := rt.board.Get("ex"); st.State != status.Ready || st.PID != first.PID || st.Restarts != 0 {
		t.Fatalf("a refused kill reached the server: %+v", st)
	}
}
