package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/exampleserver"
	"github.com/openprogram/mcpvisor/internal/redact"
	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/status"
)

// coldServer is an example server that starts cold: a burst of stderr
// lines, then no answer at all until the test opens its gate (or a
// minute passed), with connect_timeout_seconds to match. flags are added
// to its command.
func coldServer(t *testing.T, name string, flags ...string) (srv config.Server, open func()) {
	t.Helper()
	gate := filepath.Join(t.TempDir(), "gate")
	srv = exampleServer(name, append([]string{"-cold-start", "60s", "-cold-start-gate", gate}, flags...)...)
	srv.ConnectTimeoutSeconds = 90
	return srv, func() {
		if err := os.WriteFile(gate, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// A server that prints while it starts (an npx download) and answers
// initialize late shows state starting with its last stderr line, in
// Status, the server entry and the API, and nothing once ready.
// connect_timeout_seconds longer than timeout_seconds lets its slow start
// finish, while its calls still time out at timeout_seconds.
func TestColdStartShowsItsLastStderrLine(t *testing.T) {
	srv, open := coldServer(t, "cold")
	srv.TimeoutSeconds = 1
	rt := start(t, Options{}, srv)
	testutil.Eventually(t, 10*time.Second, "cold starting with its last stderr line", func() bool {
		st, _ := rt.board.Get("cold")
		return st.State == status.Starting && st.StartingDetail == exampleserver.ColdStartLastLine
	})
	// The gate holds the connect: it is still starting.
	if e := rt.Servers()[0]; e.State != status.Starting || e.StartingDetail != exampleserver.ColdStartLastLine {
		t.Errorf("server entry while starting = %+v, want the last line as starting_detail", e)
	}
	if body := string(newAPI(t, rt).do("GET", "/api/mcp/servers/cold", "").want(t, 200).body); !strings.Contains(body, `"state":"starting"`) ||
		!strings.Contains(body, `"starting_detail":"`+exampleserver.ColdStartLastLine+`"`) {
		t.Errorf("GET /api/mcp/servers/cold while starting: %s, want starting_detail", body)
	}
	open()
	st := rt.waitReady(t, "cold")
	if st.StartingDetail != "" || rt.Servers()[0].StartingDetail != "" {
		t.Errorf("ready with starting detail %q", st.StartingDetail)
	}
	began := time.Now()
	_, err := rt.CallTool(context.Background(), "cold__sleep", map[string]any{"ms": 20000})
	if took := time.Since(began); !errors.Is(err, ErrCallTimeout) || took > 3*time.Second {
		t.Fatalf("a hung call: %v after %v, want ErrCallTimeout after timeout_seconds (1 s)", err, took)
	}
}

// A secret the server prints while it starts (its token, from the env
// of its config) never reaches an event, the status's starting detail or
// the API: the detail shows the line with the secret redacted.
func TestColdStartDetailHasNoSecret(t *testing.T) {
	const secret = "COLD-START-SECRET-4821"
	srv, open := coldServer(t, "cold")
	srv.Env[exampleserver.ColdStartTokenEnv] = secret
	want := exampleserver.ColdStartLastLineWith(exampleserver.DefaultName, redact.Marker)
	rt := start(t, Options{})
	sub := rt.subscribe(t, "") // every event, from before the server exists
	leaked := func(e events.Event) bool {
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b)+e.String(), secret) {
			t.Errorf("the secret is in an event: %s", b)
		}
		return false
	}
	if _, err := rt.AddServer(context.Background(), srv); err != nil {
		t.Fatal(err)
	}
	testutil.AwaitEvent(t, sub, 10*time.Second, "the redacted line as starting output", func(e events.Event) bool {
		out, ok := e.(events.StartingOutput)
		return !leaked(e) && ok && out.Line == want
	})
	if st, _ := rt.board.Get("cold"); st.State != status.Starting || st.StartingDetail != want {
		t.Errorf("status while starting: %s with detail %q, want starting with %q", st.State, st.StartingDetail, want)
	}
	body := string(newAPI(t, rt).do("GET", "/api/mcp/servers/cold", "").want(t, 200).body)
	if strings.Contains(body, secret) || !strings.Contains(body, redact.Marker) {
		t.Errorf("GET /api/mcp/servers/cold while starting: %s, want the detail with the secret redacted", body)
	}
	open()
	testutil.AwaitEvent(t, sub, 30*time.Second, "cold ready", func(e events.Event) bool {
		sc, ok := e.(events.StateChanged)
		return !leaked(e) && ok && sc.Server == "cold" && sc.To == string(status.Ready)
	})
}

// A connect that begins anew while the server is still starting (an edit
// of its command, here) moves it from starting to starting, which no
// state change says: the old connect's last line goes at once (an empty
// starting output: the new connect has written nothing yet), never comes
// back, and the new connect's line follows.
func TestStartingAgainReplacesTheDetail(t *testing.T) {
	srv, open := coldServer(t, "cold", "-name", "first")
	rt := start(t, Options{}, srv)
	first := exampleserver.ColdStartLastLineWith("first", "")
	second := exampleserver.ColdStartLastLineWith("second", "")
	testutil.Eventually(t, 10*time.Second, "the first connect's line", func() bool {
		st, _ := rt.board.Get("cold")
		return st.StartingDetail == first
	})
	sub := rt.subscribe(t, "cold")
	patched := make(chan error, 1)
	go func() {
		command, _ := json.Marshal(append(srv.Command[:len(srv.Command)-1:len(srv.Command)-1], "second"))
		_, err := rt.PatchServer(context.Background(), "cold", []byte(`{"command": `+string(command)+`}`))
		patched <- err
	}()
	cleared := false
	testutil.AwaitEvent(t, sub, 20*time.Second, "the second connect's line", func(e events.Event) bool {
		if sc, ok := e.(events.StateChanged); ok && sc.To != string(status.Starting) {
			t.Fatalf("left starting before the second connect wrote: %v", sc)
		}
		out, ok := e.(events.StartingOutput)
		switch {
		case !ok:
			return false
		case out.Line == "":
			cleared = true
			return false
		case out.Line == first:
			t.Errorf("the first connect's line came again after the edit")
			return false
		case out.Line == second && !cleared:
			t.Errorf("the second connect's line came before the first one's was cleared")
		}
		return out.Line == second
	})
	if st, _ := rt.board.Get("cold"); st.State != status.Starting || st.StartingDetail != second {
		t.Errorf("status: %s with detail %q, want starting with %q", st.State, st.StartingDetail, second)
	}
	open()
	if err := <-patched; err != nil {
		t.Fatalf("the edit: %v", err)
	}
	rt.waitReady(t, "cold")
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
