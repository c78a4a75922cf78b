package runtime

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/internal/exampleserver"
	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/status"
)

// A server that prints while it starts (an npx download) and answers
// initialize late shows state starting with its last stderr line, in
// Status, the server entry and the API, and nothing once ready.
// connect_timeout_seconds longer than timeout_seconds lets its slow start
// finish, while its calls still time out at timeout_seconds.
func TestColdStartShowsItsLastStderrLine(t *testing.T) {
	srv := exampleServer("cold", "-cold-start", "2s")
	srv.TimeoutSeconds = 1
	srv.ConnectTimeoutSeconds = 20
	rt := start(t, Options{}, srv)
	testutil.Eventually(t, 10*time.Second, "cold starting with its last stderr line", func() bool {
		st, _ := rt.board.Get("cold")
		return st.State == status.Starting && st.StartingDetail == exampleserver.ColdStartLastLine
	})
	if e := rt.Servers()[0]; e.State == status.Starting && e.StartingDetail != exampleserver.ColdStartLastLine {
		t.Errorf("server entry while starting = %+v, want the last line as starting_detail", e)
	}
	if body := string(newAPI(t, rt).do("GET", "/api/mcp/servers/cold", "").want(t, 200).body); rt.Servers()[0].State == status.Starting &&
		!strings.Contains(body, `"starting_detail":"`+exampleserver.ColdStartLastLine+`"`) {
		t.Errorf("GET /api/mcp/servers/cold while starting: %s, want starting_detail", body)
	}
	st := rt.waitReady(t, "cold") // past timeout_seconds (1 s): the connect has 20
	if st.StartingDetail != "" || rt.Servers()[0].StartingDetail != "" {
		t.Errorf("ready with starting detail %q", st.StartingDetail)
	}
	began := time.Now()
	_, err := rt.CallTool(context.Background(), "cold__sleep", map[string]any{"ms": 20000})
	if took := time.Since(began); !errors.Is(err, ErrCallTimeout) || took > 3*time.Second {
		t.Fatalf("a hung call: %v after %v, want ErrCallTimeout after timeout_seconds (1 s)", err, took)
	}
}

// Without connect_timeout_seconds the connect has timeout_seconds, and its
// error names the field that bounds it.
func TestSlowStartTimesOutNamingConnectTimeout(t *testing.T) {
	srv := exampleServer("cold", "-cold-start", "30s")
	srv.TimeoutSeconds = 1
	rt := start(t, Options{}, srv)
	st := rt.waitSettled(t, "cold")
	if st.ErrorKind != status.KindTimeout || !strings.Contains(st.Error, "no answer within connect_timeout_seconds=1 (timeout_seconds)") {
		t.Fatalf("status %+v, want a timeout naming connect_timeout_seconds=1", st)
	}
	if !strings.Contains(st.Error, exampleserver.ColdStartLastLine) {
		t.Errorf("error %q, want the last stderr line", st.Error)
	}
	if st.StartingDetail != "" {
		t.Errorf("settled in %s with starting detail %q", st.State, st.StartingDetail)
	}
}
