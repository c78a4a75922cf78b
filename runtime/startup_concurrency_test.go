package runtime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/exampleserver"
	"github.com/openprogram/mcpvisor/internal/testutil/oauthfake"
	"github.com/openprogram/mcpvisor/status"
)

// slowServers configures n example servers s0..s(n-1) whose initialize
// takes delay and is recorded in dir (exampleserver.InitializeLog), with
// the example server's flags more.
func slowServers(n int, delay time.Duration, dir string, more ...string) []config.Server {
	out := make([]config.Server, n)
	for i := range out {
		name := fmt.Sprintf("s%d", i)
		out[i] = exampleServer(name, append([]string{"-name", name, "-initialize-delay", delay.String(), "-initialize-dir", dir}, more...)...)
	}
	return out
}

// initializeLog reads the handshakes recorded in dir: the servers in the
// order they began, and the most that were in flight at once.
func initializeLog(t *testing.T, dir string) (names []string, most int) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, exampleserver.InitializeLog))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(strings.TrimSpace(string(data))) {
		name, count, _ := strings.Cut(strings.TrimSpace(line), " ")
		n, err := strconv.Atoi(count)
		if err != nil {
			t.Fatalf("log line %q", line)
		}
		names = append(names, name)
		most = max(most, n)
	}
	return names, most
}

// G5: with StartupConcurrency N, up to N initializes are in flight at
// once and never more; 0 and 1 stay one after another.
func TestStartupConcurrencyBoundsConnects(t *testing.T) {
	for _, tc := range []struct {
		concurrency, servers int
		delay                time.Duration
		barrier              int // the first handshakes wait until so many began (-initialize-barrier)
		lo, hi               int // the most in flight at once must be within
	}{
		{concurrency: 0, servers: 3, delay: 100 * time.Millisecond, lo: 1, hi: 1},
		{concurrency: 1, servers: 3, delay: 100 * time.Millisecond, lo: 1, hi: 1},
		// The first three wait for each other (the barrier), so the bound
		// is reached, not only respected, however loaded the machine; a
		// runtime that let fewer than three connect at once would leave
		// them waiting for the barrier's bound, and the log would show it.
		{concurrency: 3, servers: 7, delay: 100 * time.Millisecond, barrier: 3, lo: 3, hi: 3},
	} {
		t.Run(fmt.Sprintf("c%d", tc.concurrency), func(t *testing.T) {
			dir := t.TempDir()
			var more []string
			if tc.barrier > 0 {
				more = []string{"-initialize-barrier", strconv.Itoa(tc.barrier)}
			}
			servers := slowServers(tc.servers, tc.delay, dir, more...)
			rt := start(t, Options{StartupConcurrency: tc.concurrency}, servers...)
			for _, srv := range servers {
				if st := rt.waitSettled(t, srv.Name); st.State != status.Ready {
					t.Fatalf("%s = %+v", srv.Name, st)
				}
			}
			names, most := initializeLog(t, dir)
			if len(names) != tc.servers {
				t.Errorf("%d handshakes recorded (%v), want one per server", len(names), names)
			}
			if most < tc.lo || most > tc.hi {
				t.Errorf("at most %d initializes in flight at once, want %d..%d", most, tc.lo, tc.hi)
			}
		})
	}
}

// history is every event of rt so far, in Seq order.
func history(t *testing.T, rt *testRuntime) []events.Event {
	t.Helper()
	sub := rt.bus.Subscribe(events.SubscribeOptions{From: 1})
	defer sub.Close()
	return drain(sub)
}

// firstState returns the Seq of the first change of server to state, or 0.
func firstState(evs []events.Event, server string, state status.State) uint64 {
	for _, e := range evs {
		if s, ok := e.(events.StateChanged); ok && s.Server == server && s.To == string(state) {
			return s.Seq
		}
	}
	return 0
}

// G5: turns begin in file order, and a connect that fails gives its slot
// up. Two slots: "long" holds one for the whole test (it never answers);
// "short" holds the other until its connect times out. Only then do a,
// b and c start, one after another through the one free slot, in file
// order.
func TestStartupTurnsInFileOrder(t *testing.T) {
	short := exampleServer("short", "-hang-initialize")
	short.TimeoutSeconds = 1
	long := exampleServer("long", "-hang-initialize")
	long.TimeoutSeconds = 120
	// A long first backoff keeps "short" from retrying during the test.
	rt := start(t, Options{StartupConcurrency: 2, Restart: RestartPolicy{Initial: time.Hour}},
		short, long, exampleServer("a"), exampleServer("b"), exampleServer("c"))
	for _, name := range []string{"a", "b", "c"} {
		if st := rt.waitSettled(t, name); st.State != status.Ready {
			t.Fatalf("%s = %+v", name, st)
		}
	}
	if st := mustStatus(t, rt, "long"); st.State != status.Starting {
		t.Fatalf("long = %+v, want still starting: the test needs it to hold its slot", st)
	}
	evs := history(t, rt)
	failed := firstState(evs, "short", status.Backoff)
	a, b, c := firstState(evs, "a", status.Ready), firstState(evs, "b", status.Ready), firstState(evs, "c", status.Ready)
	if failed == 0 || !(failed < a && a < b && b < c) {
		t.Errorf("seq of short's failure %d, then ready of a %d, b %d, c %d: want them in that order", failed, a, b, c)
	}
	for _, e := range evs {
		if s, ok := e.(events.SessionStarted); ok && (s.Server == "b" || s.Server == "c") && s.Seq < a {
			t.Errorf("%v before a was ready: b and c had to wait for the one free slot", e)
		}
	}
}

// G5 and L3 under concurrency: a server deleted or disabled in the file
// (by hand, no reload) or removed through the API while it waits for its
// turn is not started, however many slots there are; the others start.
func TestStartupConcurrencyReadsFileAtEachTurn(t *testing.T) {
	hang := func(name string) config.Server {
		s := exampleServer(name, "-hang-initialize")
		s.TimeoutSeconds = 3
		return s
	}
	rt := start(t, Options{StartupConcurrency: 2, Restart: RestartPolicy{Initial: time.Hour}},
		hang("h1"), hang("h2"), exampleServer("deleted"), exampleServer("disabled"), exampleServer("removed"), exampleServer("ok"))
	waitForProcesses(t, 2) // h1 and h2 hold both slots; the others wait for their turn
	sub := rt.subscribe(t, "")

	store := config.Store{Dir: func() (string, error) { return rt.dir, nil }}
	f, err := store.Load()
	if err != nil {
		t.Fatal(err)
	}
	f.Remove("deleted")
	d, _ := f.Get("disabled")
	d.Enabled = false
	f.Put(d)
	if err := store.Save(f); err != nil {
		t.Fatal(err)
	}
	if err := rt.RemoveServer(context.Background(), "removed"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"h1", "h2"} {
		if st := mustStatus(t, rt, name); st.State != status.Starting {
			t.Fatalf("%s = %+v: the slots were free before the edits were done", name, st)
		}
	}

	if st := rt.waitSettled(t, "ok"); st.State != status.Ready {
		t.Fatalf("ok = %+v", st)
	}
	for _, name := range []string{"h1", "h2"} {
		if st := mustStatus(t, rt, name); st.State != status.Backoff {
			t.Errorf("%s = %+v, want its connect timed out before ok's turn", name, st)
		}
	}
	if _, err := rt.Server("deleted"); !errors.Is(err, ErrUnknownServer) {
		t.Errorf("deleted still configured: %v", err)
	}
	if _, err := rt.Server("removed"); !errors.Is(err, ErrUnknownServer) {
		t.Errorf("removed still configured: %v", err)
	}
	if st := mustStatus(t, rt, "disabled"); st.State != status.Disabled {
		t.Errorf("disabled = %+v, want disabled as the file says now", st)
	}
	for _, e := range drain(sub) {
		if s, ok := e.(events.SessionStarted); ok && s.Server != "ok" {
			t.Errorf("%v: only ok may have started", e)
		}
	}
	for _, tool := range rt.Tools() {
		if tool.Server != "ok" {
			t.Errorf("tool %s of a server that must not run", tool.Name)
		}
	}
	if n := waitProcessCount(1); n != 1 {
		t.Errorf("%d server processes, want only ok's", n)
	}
}

// drain returns what sub holds now (a replayed history, or what arrived
// since it subscribed), without waiting.
func drain(sub *events.Subscription) []events.Event {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out []events.Event
	for {
		e, err := sub.Next(ctx)
		if err != nil {
			return out
		}
		out = append(out, e)
	}
}

// G5: a connect that waits for the user's OAuth login holds no slot.
// Two slots: "web" waits for a login nobody gives, "long" never answers;
// "ok" still gets the slot web gave up.
func TestStartupLoginHoldsNoSlot(t *testing.T) {
	as := oauthfake.New(t)
	long := exampleServer("long", "-hang-initialize")
	long.TimeoutSeconds = 120
	rt := start(t, Options{StartupConcurrency: 2, OpenURL: (&browser{stay: true}).open}, as.Config("web"), long, exampleServer("ok"))
	if st := rt.waitSettled(t, "ok"); st.State != status.Ready {
		t.Fatalf("ok = %+v", st)
	}
	if st := mustStatus(t, rt, "web"); st.State != status.Authorizing {
		t.Errorf("web = %+v, want its login still waiting", st)
	}
	if st := mustStatus(t, rt, "long"); st.State != status.Starting {
		t.Errorf("long = %+v, want still starting: the test needs it to hold its slot", st)
	}
}

// A negative StartupConcurrency is refused by Start, naming the field.
func TestStartupConcurrencyNegativeRefused(t *testing.T) {
	rt, err := Start(context.Background(), Options{StateDir: t.TempDir(), StartupConcurrency: -1})
	if err == nil {
		rt.Shutdown(context.Background())
		t.Fatal("Start accepted StartupConcurrency -1")
	}
	if !errors.Is(err, ErrInvalidOptions) || !strings.Contains(err.Error(), "StartupConcurrency") {
		t.Errorf("Start = %v, want ErrInvalidOptions naming StartupConcurrency", err)
	}
}
