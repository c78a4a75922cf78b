package runtime

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/config"
)

// An apply whose manager does not answer still gets its whole answer,
// through a real connection whose server WriteTimeout (500 ms) is shorter
// than the apply: the route's own budget extends the write deadline, and
// ApplyCatalog starts no entry later than the answer wait plus the write
// margin before that deadline. Here the budget is 91 s, the answer wait
// 60 s and the margin 30 s, so entries may start for 1 s: the first is
// handed over and its answer waited for ("unknown" once the runtime's
// fake clock is moved 60 s on), the others are "skipped" (the clock is
// past the 1 s), and the JSON answer arrives complete, in no real time
// worth counting. (Before the fix each entry waited its answer wait until
// the deadline cut the connection.)
func TestCatalogApplySlowManagerAnswers(t *testing.T) {
	home, project := catalogHome(t)
	opts := Options{Home: home, Projects: []string{project}, LookupEnv: catalogLookup}
	fc := fakeClock(&opts)
	rt := start(t, opts)
	handed := make(chan string, 3)
	rt.apply = applyTuning{budget: 91 * time.Second, answerWait: 60 * time.Second, writeMargin: 30 * time.Second,
		// A manager that never answers.
		add: func(ctx context.Context, s config.Server) error {
			handed <- s.Name
			<-ctx.Done()
			return ctx.Err()
		}}
	srv := httptest.NewUnstartedServer(rt.Handler())
	srv.Config.WriteTimeout = 500 * time.Millisecond
	srv.Start()
	t.Cleanup(srv.Close)
	if !strings.HasPrefix(srv.Listener.Addr().String(), "127.0.0.1:") {
		t.Fatalf("serving on %s, not loopback", srv.Listener.Addr())
	}
	body := `{"entries": [{"source": "claude-code", "name": "beta", "as": "b1"}, {"source": "claude-code", "name": "beta", "as": "b2"}, {"source": "claude-code", "name": "beta", "as": "b3"}]}`
	type answer struct {
		resp *http.Response
		raw  []byte
		err  error
	}
	answered := make(chan answer, 1)
	go func() {
		client := &http.Client{Timeout: 20 * time.Second}
		resp, err := client.Post(srv.URL+"/api/mcp/catalog/apply", "application/json", strings.NewReader(body))
		if err != nil {
			answered <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		answered <- answer{resp, raw, err}
	}()
	select {
	case n := <-handed: // its answer wait is set on fc
		if n != "b1" {
			t.Errorf("the first entry handed is %s, want b1", n)
		}
	case <-time.After(clockWait):
		t.Fatal("no entry was handed to the manager")
	}
	fc.Advance(60 * time.Second)
	a := <-answered
	if a.err != nil {
		t.Fatalf("the answer was cut after %d bytes: %v", len(a.raw), a.err)
	}
	resp, raw := a.resp, a.raw
	var res CatalogApply
	if err := json.Unmarshal(raw, &res); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("%d %s: %v", resp.StatusCode, raw, err)
	}
	want := []string{ApplyUnknown, ApplySkipped, ApplySkipped}
	if len(res.Results) != len(want) {
		t.Fatalf("%d results: %s", len(res.Results), raw)
	}
	for i, r := range res.Results {
		if r.Status != want[i] || r.Error == "" || r.Entry != nil {
			t.Errorf("result %d = %+v, want %s", i, r, want[i])
		}
	}
	if len(handed) != 0 {
		t.Errorf("the manager was handed %d entries, want b1 alone", len(handed)+1)
	}
	if n := len(rt.config.Load().Servers); n != 0 {
		t.Errorf("%d servers configured, want none", n)
	}
}
