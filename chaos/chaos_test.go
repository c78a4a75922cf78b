//go:build unix

package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/runtime"
	"github.com/openprogram/mcpvisor/status"
)

var (
	demoBin string
	marker  = fmt.Sprintf("chaos-test-%d", os.Getpid())
)

func TestMain(m *testing.M) { testutil.Main(m, &demoBin, marker) }

const (
	servers        = 4
	callers        = 4
	timeoutSeconds = 2
	maxTimeout     = 4 // the management goroutine PATCHes timeouts up to this
	grace          = 200 * time.Millisecond
	maxBackoff     = time.Second
	// keepAlive is short, so that a server left stopped is found (by its
	// stopped state at a tick, or an unanswered probe) while the chaos
	// runs; stoppedBound is how soon its process must be gone after the
	// SIGSTOP: two intervals, the kill, plus slack for a loaded machine.
	keepAlive    = 250 * time.Millisecond
	stoppedBound = 2*keepAlive + 5*time.Second
	// A call may take its timeout, plus a stop sequence if its session is
	// being replaced, plus scheduling slack on a loaded machine.
	callBound = maxTimeout*time.Second + 2*grace + 3*time.Second
)

// model is what the config file must hold at the end: the changes the
// management goroutine applied successfully.
type model struct {
	enabled map[string]bool
	timeout map[string]int
}

func TestChaos(t *testing.T) {
	kills := 40
	if v, err := strconv.Atoi(os.Getenv("CHAOS_KILLS")); err == nil && v > 0 {
		kills = v
	}
	dir := t.TempDir()
	want := model{enabled: map[string]bool{}, timeout: map[string]int{}}
	var list []config.Server
	for i := range servers {
		name := fmt.Sprintf("s%d", i)
		list = append(list, config.Server{
			Name: name, Type: config.TypeLocal, Command: []string{demoBin, "serve", "-fault-tools"}, Enabled: true,
			TimeoutSeconds: timeoutSeconds, Env: map[string]string{testutil.MarkerEnv: marker},
		})
		want.enabled[name], want.timeout[name] = true, timeoutSeconds
	}
	testutil.WriteConfig(t, dir, list...)
	before := goleak.IgnoreCurrent()
	rt, err := runtime.Start(context.Background(), runtime.Options{
		StateDir: dir, Debug: true, StopGrace: grace, KeepAlive: keepAlive,
		Restart: runtime.RestartPolicy{Initial: 50 * time.Millisecond, Max: maxBackoff},
		// Servers ask for sampling now and then (the ask tool), more at
		// once than the default limits let through: the rebuild compares
		// requests_refused on real refusals.
		Sample: func(context.Context, runtime.SamplingRequest) (runtime.SamplingResult, error) {
			return runtime.SamplingResult{Text: "ok", Model: "chaos"}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	rebuilt, fromEvents := watchEvents(rt), "not_compared"
	detected := countUnresponsive(rt)
	var callsOK, callsFailed, hung, violations, killed, leftStopped atomic.Int64
	leakedProcesses, leakedGoroutines := -1, -1
	// Whatever happens, one summary line, and nothing left running.
	defer func() {
		fmt.Printf("chaos: kills=%d calls_ok=%d calls_failed=%d hung=%d leaked_processes=%d leaked_goroutines=%d violations=%d status_from_events=%s left_stopped=%d stopped_detected=%d\n",
			killed.Load(), callsOK.Load(), callsFailed.Load(), hung.Load(), leakedProcesses, leakedGoroutines, violations.Load(), fromEvents, leftStopped.Load(), detected.n.Load())
	}()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = rt.Shutdown(ctx)
		for _, pid := range testutil.ProcessesWithMarker(marker) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})

	// One sure refusal before the chaos (a short run may draw no ask),
	// so that the rebuild always compares requests_refused on a real one.
	testutil.Eventually(t, 30*time.Second, "a refused sampling request of s0", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), callBound)
		defer cancel()
		_, _ = rt.CallTool(ctx, "s0__ask", map[string]any{"kind": "sampling", "count": 5})
		st, _ := rt.Server("s0")
		return st.RequestsRefused > 0
	})

	stop := make(chan struct{})
	// stopped is stop for a wait that takes a context.
	stopped, endStopped := context.WithCancel(context.Background())
	defer endStopped()
	var wg sync.WaitGroup

	// Callers: every call returns within its bound, with a result or an
	// error that says what happened.
	for range callers {
		wg.Go(func() {
			changes := rt.Subscribe(events.SubscribeOptions{})
			defer changes.Close()
			for {
				select {
				case <-stop:
					return
				default:
				}
				server := fmt.Sprintf("s%d", rand.IntN(servers))
				tool, args := server+"__echo", map[string]any{"text": "x"}
				switch rand.IntN(40) {
				case 0, 1, 2, 3, 4, 5, 6, 7, 8, 9:
					tool, args = server+"__sleep", map[string]any{"ms": 30}
				case 10:
					tool, args = server+"__ask", map[string]any{"kind": "sampling", "count": 5}
				}
				began := time.Now()
				ctx, cancel := context.WithTimeout(context.Background(), 2*callBound)
				_, err := rt.CallTool(ctx, tool, args)
				cancel()
				if time.Since(began) > callBound {
					hung.Add(1)
					t.Errorf("call %s took %s: %v", tool, time.Since(began), err)
				}
				if err == nil {
					callsOK.Add(1)
				} else {
					callsFailed.Add(1)
					if err.Error() == "" {
						t.Errorf("call %s failed without saying why", tool)
					}
					// Don't spin while a server is down: go on once
					// some server changed after this failure.
					awaitChange(stopped, changes)
				}
			}
		})
	}

	// Checker: a registered tool always belongs to a server that shows
	// ready. A tool read after time t whose server shows another state that
	// began before t is a violation (ready is published before tools are
	// registered; tools are unregistered before the state leaves ready).
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(3 * time.Millisecond):
			}
			t0 := time.Now()
			toolsNow := rt.Tools()
			states := map[string]status.Server{}
			for _, s := range rt.Status().Servers {
				states[s.Name] = s
			}
			for _, tool := range toolsNow {
				st, ok := states[tool.Server]
				if ok && st.State != status.Ready && st.Since.Before(t0) {
					violations.Add(1)
					t.Errorf("tool %s registered while %s is %s since %s", tool.Name, tool.Server, st.State, st.Since)
				}
			}
		}
	})

	// leftAlone holds the servers left stopped until their process is
	// gone: neither management nor the killer touches them meanwhile, so
	// that what ends them is the runtime's keepalive (a restart's stop
	// sequence would kill them too).
	var leftAlone sync.Map

	// Management: random enable/disable/restart/PATCH, applied one at a
	// time; what succeeded is what the file must hold.
	wg.Go(func() {
		ctx := context.Background()
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Duration(10+rand.IntN(40)) * time.Millisecond):
			}
			name := fmt.Sprintf("s%d", rand.IntN(servers))
			if _, skip := leftAlone.Load(name); skip {
				continue
			}
			switch rand.IntN(4) {
			case 0:
				on := !want.enabled[name]
				if _, err := rt.PatchServer(ctx, name, fmt.Appendf(nil, `{"enabled": %v}`, on)); err == nil {
					want.enabled[name] = on
				} else {
					t.Errorf("toggling %s: %v", name, err)
				}
			case 1:
				if _, err := rt.RestartServer(ctx, name); err != nil && !errors.Is(err, runtime.ErrDisabled) && !errors.Is(err, runtime.ErrServerDied) && !errors.Is(err, runtime.ErrSuperseded) {
					t.Errorf("restarting %s: %v", name, err)
				}
			default:
				n := 2 + rand.IntN(3)
				_, err := rt.PatchServer(ctx, name, fmt.Appendf(nil, `{"timeout_seconds": %d}`, n))
				switch {
				case err == nil:
					want.timeout[name] = n
				case errors.Is(err, runtime.ErrRestartFailed), errors.Is(err, runtime.ErrServerDied), errors.Is(err, runtime.ErrSuperseded):
					// no effect on the file, by contract
				default:
					t.Errorf("patching %s: %v", name, err)
				}
			}
		}
	})

	// Killer: actor failures and process signals. continuing holds the
	// pids of the brief stops whose SIGCONT is still to come.
	var continued sync.WaitGroup
	var continuing sync.Map
	for killed.Load() < int64(kills) && !t.Failed() {
		time.Sleep(time.Duration(5+rand.IntN(25)) * time.Millisecond)
		name := fmt.Sprintf("s%d", rand.IntN(servers))
		if _, skip := leftAlone.Load(name); skip {
			continue
		}
		st := statusOf(rt, name)
		switch action := rand.IntN(8); {
		case action < 6:
			path := "manager/" + name
			if action%2 == 1 {
				path += "/session"
			}
			how := []string{"panic", "stop", "poison"}[action/2]
			if rt.InjectFailure(context.Background(), path, how) == nil {
				killed.Add(1)
			}
		case action == 6 && st.PID > 0:
			if syscall.Kill(st.PID, syscall.SIGKILL) == nil {
				killed.Add(1)
			}
		case action == 7 && st.PID > 0 && rand.IntN(3) == 0:
			// Left stopped, the whole group: only the runtime's keepalive
			// ends it, by killing the group. Not a process whose brief
			// stop is still to be continued: that SIGCONT would wake it.
			if _, pending := continuing.Load(st.PID); pending {
				break
			}
			leftAlone.Store(name, true)
			if syscall.Kill(-st.PID, syscall.SIGSTOP) != nil {
				leftAlone.Delete(name)
				break
			}
			killed.Add(1)
			leftStopped.Add(1)
			pid := st.PID
			continued.Go(func() {
				defer leftAlone.Delete(name)
				if !testutil.Within(stoppedBound, func() bool { return !testutil.Alive(pid) }) {
					violations.Add(1)
					t.Errorf("%s's process %d still there %s after it was left stopped", name, pid, stoppedBound)
					_ = syscall.Kill(-pid, syscall.SIGKILL)
				}
			})
		case action == 7 && st.PID > 0:
			if syscall.Kill(st.PID, syscall.SIGSTOP) == nil {
				killed.Add(1)
				pid := st.PID
				continuing.Store(pid, true)
				continued.Go(func() {
					defer continuing.Delete(pid)
					time.Sleep(time.Duration(50+rand.IntN(300)) * time.Millisecond)
					_ = syscall.Kill(pid, syscall.SIGCONT)
				})
			}
		}
	}
	close(stop)
	endStopped()
	waitBounded(t, &wg, 2*callBound, "callers, checker and management")
	continued.Wait()

	// The file holds exactly the applied changes.
	f, err := config.Store{Dir: func() (string, error) { return dir, nil }}.Load()
	if err != nil {
		t.Fatalf("config file after chaos: %v", err)
	}
	for name, on := range want.enabled {
		s, ok := f.Get(name)
		if !ok || s.Enabled != on || s.TimeoutSeconds != want.timeout[name] {
			t.Errorf("%s in the file = %+v, want enabled=%v timeout=%d", name, s, on, want.timeout[name])
		}
	}

	// Once the chaos stops, every server recovers by itself: the enabled
	// ones become ready (the longest wait: a full backoff and a connect),
	// the disabled ones stay disabled.
	recoverBy := time.Now().Add(2*maxBackoff + maxTimeout*time.Second + 10*time.Second)
	for name, on := range want.enabled {
		var st status.Server
		if !testutil.Within(time.Until(recoverBy), func() bool {
			st = statusOf(rt, name)
			return on && st.State == status.Ready || !on && st.State == status.Disabled
		}) {
			t.Errorf("%s did not recover after the chaos: %+v", name, st)
		}
	}

	running := rebuilt.settled(rt, 10*time.Second)

	// A process frozen with SIGSTOP at shutdown is still stopped (SIGKILL
	// acts on a stopped process).
	for _, s := range rt.Status().Servers {
		if s.PID > 0 {
			_ = syscall.Kill(s.PID, syscall.SIGSTOP)
			break
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := rt.Shutdown(ctx); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	detected.finish(10 * time.Second)
	if final, err := rebuilt.finish(rt, 10*time.Second); err != nil {
		t.Error(err)
	} else {
		fromEvents = rebuilt.verdict(t, running, final)
		refused := 0
		for _, s := range rt.Status().Servers {
			refused += s.RequestsRefused
		}
		if refused == 0 {
			t.Errorf("no request was refused: the rebuild compared no requests_refused")
		}
	}
	leakedProcesses = len(testutil.ProcessesWithMarker(marker))
	leakedGoroutines = 0
	if err := goleak.Find(before); err != nil {
		leakedGoroutines = 1
		t.Errorf("goroutines leaked: %v", err)
	}
	if leakedProcesses > 0 {
		t.Errorf("processes left: %v", testutil.ProcessesWithMarker(marker))
	}
	if callsOK.Load() == 0 {
		t.Error("no call succeeded: the chaos never let the servers work")
	}
	if leftStopped.Load() > 0 && detected.n.Load() == 0 {
		t.Errorf("%d servers were left stopped and no session was lost as unresponsive", leftStopped.Load())
	}
}

// unresponsiveCount counts the sessions lost as unresponsive (the
// keepalive's kill), from the events.
type unresponsiveCount struct {
	n    atomic.Int64
	sub  *events.Subscription
	done chan struct{}
}

func countUnresponsive(rt *runtime.Runtime) *unresponsiveCount {
	c := &unresponsiveCount{sub: rt.Subscribe(events.SubscribeOptions{Buffer: 1 << 16}), done: make(chan struct{})}
	go func() {
		defer close(c.done)
		for {
			e, err := c.sub.Next(context.Background())
			if err != nil {
				return
			}
			if lost, ok := e.(events.SessionLost); ok && strings.Contains(lost.Error, runtime.ErrUnresponsive.Error()) {
				c.n.Add(1)
			}
		}
	}()
	return c
}

// finish waits, up to limit, for the events of a runtime shut down to be
// counted (its bus ends the subscription after the last one), then stops.
func (c *unresponsiveCount) finish(limit time.Duration) {
	select {
	case <-c.done:
	case <-time.After(limit):
	}
	c.sub.Close()
	<-c.done
}

func statusOf(rt *runtime.Runtime, name string) status.Server {
	for _, s := range rt.Status().Servers {
		if s.Name == name {
			return s
		}
	}
	return status.Server{}
}

func waitBounded(t *testing.T, wg *sync.WaitGroup, limit time.Duration, what string) {
	t.Helper()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(limit):
		t.Fatalf("%s still running %s after stop: something hangs", what, limit)
	}
}

// awaitChange waits for the next lifecycle event after the ones sub
// already holds (those came before the failure that asks), or ctx's end.
func awaitChange(ctx context.Context, sub *events.Subscription) {
	held, drop := context.WithCancel(ctx)
	drop()
	for {
		if _, err := sub.Next(held); err != nil {
			break
		}
	}
	for {
		e, err := sub.Next(ctx)
		if err != nil {
			return
		}
		switch e.(type) {
		case events.ServerLog, events.StartingOutput: // a server's output, not a change
		default:
			return
		}
	}
}
