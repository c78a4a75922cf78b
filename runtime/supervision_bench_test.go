package runtime

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/status"
)

// BenchmarkRecovery measures the time from SIGKILL of a stdio server to its
// tools being registered again on a new process (target: the first backoff,
// 200ms, plus one connect).
func BenchmarkRecovery(b *testing.B) {
	dir := b.TempDir()
	testutil.WriteConfig(b, dir, exampleServer("ex"))
	rt, err := Start(context.Background(), Options{StateDir: dir, StopGrace: 200 * time.Millisecond})
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Shutdown(context.Background())
	pid := waitReadyPID(b, rt, "ex", 0)
	sub := rt.Registry().Subscribe()
	defer sub.Close()
	measureRecovery(b, rt, pid)
}

// measureRecovery SIGKILLs ex's process b.N times and reports the time to
// ready again. Run with -benchtime 1x: a second kill right after the first
// would measure the grown backoff, not the first delay.
func measureRecovery(b *testing.B, rt *Runtime, pid int) {
	for range b.N {
		began := time.Now()
		if err := testutil.Kill(pid); err != nil {
			b.Fatal(err)
		}
		pid = waitReadyPID(b, rt, "ex", pid)
		b.ReportMetric(float64(time.Since(began).Microseconds())/1000, "ms/recovery")
	}
}

// waitReadyPID waits until name is ready with tools on a process other
// than old, and returns its pid.
func waitReadyPID(b *testing.B, rt *Runtime, name string, old int) int {
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, _ := rt.board.Get(name)
		if st.State == status.Ready && st.PID != old && st.PID != 0 {
			if _, ok := rt.Registry().Get(name + "__echo"); ok {
				return st.PID
			}
		}
		if time.Now().After(deadline) {
			b.Fatalf("%s not ready: %+v", name, st)
		}
		time.Sleep(200 * time.Microsecond)
	}
}

// BenchmarkShutdown50 measures Shutdown of 50 stdio servers, a fifth of
// them ignoring SIGTERM, each with a call in flight (target: the stop
// grace plus 200ms, no process left).
func BenchmarkShutdown50(b *testing.B) {
	const grace = 500 * time.Millisecond
	for range b.N {
		b.StopTimer()
		dir := b.TempDir()
		var servers []config.Server
		for i := range 50 {
			var flags []string
			if i%5 == 0 {
				flags = []string{"-ignore-sigterm"}
			}
			servers = append(servers, exampleServer(fmt.Sprintf("s%02d", i), flags...))
		}
		testutil.WriteConfig(b, dir, servers...)
		rt, err := Start(context.Background(), Options{StateDir: dir, StopGrace: grace})
		if err != nil {
			b.Fatal(err)
		}
		for _, s := range servers {
			waitReadyPID(b, rt, s.Name, 0)
		}
		var calls sync.WaitGroup
		for _, s := range servers {
			calls.Go(func() { _, _ = rt.CallTool(context.Background(), s.Name+"__sleep", map[string]any{"ms": 60000}) })
		}
		time.Sleep(100 * time.Millisecond) // the calls are in flight
		b.StartTimer()
		began := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := rt.Shutdown(ctx); err != nil {
			b.Fatal(err)
		}
		cancel()
		b.ReportMetric(float64(time.Since(began).Milliseconds()), "ms/shutdown")
		b.StopTimer()
		calls.Wait()
		if left := testutil.ProcessesWithMarker(marker); len(left) > 0 {
			b.Fatalf("processes left after shutdown: %v", left)
		}
		b.StartTimer()
	}
}
