package runtime

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/status"
)

func TestDebugKillRouteOffByDefault(t *testing.T) {
	rt := start(t, Options{})
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/debug/actors/kill", strings.NewReader(`{"path":"manager/x","how":"stop"}`))
	req.Header.Set("Content-Type", "application/json")
	rt.Handler().ServeHTTP(rec, req)
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
				rec := httptest.NewRecorder()
				req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/debug/actors/kill", strings.NewReader(`{"path":"`+path+`","how":"`+how+`"}`))
				req.Header.Set("Content-Type", "application/json")
				rt.Handler().ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					t.Fatalf("kill answered %d: %s", rec.Code, rec.Body)
				}
				deadline := time.Now().Add(20 * time.Second)
				for {
					st, _ := rt.board.Get("ex")
					if st.State == status.Ready && st.PID != first.PID && len(rt.Tools()) > 0 && len(testutil.ProcessesWithMarker(marker)) == 1 {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("not recovered: %+v, processes %v", st, testutil.ProcessesWithMarker(marker))
					}
					time.Sleep(5 * time.Millisecond)
				}
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
		rt.Handler().ServeHTTP(rec, req)
		if rec.Code != want {
			t.Errorf("%s: %d %s, want %d", body, rec.Code, rec.Body, want)
		}
	}
	if st, _ := rt.board.Get("ex"); st.State != status.Ready {
		t.Fatalf("a refused kill changed the server: %+v", st)
	}
}
