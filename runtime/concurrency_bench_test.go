package runtime

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkConcurrentCalls measures S7: 8 concurrent 200 ms calls of the
// example server's sleep tool, on one server over stdio, finish in ≤ 1.2×
// the time of one call. Each iteration times one call, then 8 at once,
// both through Runtime.CallTool; besides ns/op (one iteration: both) it
// reports the medians one-ms and eight-ms and their ratio eight/one, the
// figure the target is about.
//
// "unlimited" is the default (max_concurrent_calls 0); "single-flight"
// (max_concurrent_calls 1) is the control, where the ratio is about 8.
func BenchmarkConcurrentCalls(b *testing.B) {
	const (
		calls = 8
		ms    = 200
	)
	for _, tc := range []struct {
		name  string
		limit int
	}{{"unlimited", 0}, {"single-flight", 1}} {
		b.Run(tc.name, func(b *testing.B) {
			srv := exampleServer("ex")
			srv.MaxConcurrentCalls = tc.limit
			rt := startBench(b, Options{}, srv)
			ctx := context.Background()
			sleep := func() error {
				// A fresh arguments map per call, as a host would send.
				res, err := rt.CallTool(ctx, "ex__sleep", map[string]any{"ms": ms})
				if err == nil && res.IsError {
					err = errors.New("the sleep tool failed")
				}
				return err
			}
			together := func() error {
				errs := make(chan error, calls)
				var wg sync.WaitGroup
				for range calls {
					wg.Go(func() { errs <- sleep() })
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					if err != nil {
						return err
					}
				}
				return nil
			}
			if err := together(); err != nil { // warm-up: the session and its first calls
				b.Fatal(err)
			}
			one := make([]time.Duration, 0, b.N)
			eight := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				t0 := time.Now()
				if err := sleep(); err != nil {
					b.Fatal(err)
				}
				one = append(one, time.Since(t0))
				t0 = time.Now()
				if err := together(); err != nil {
					b.Fatal(err)
				}
				eight = append(eight, time.Since(t0))
			}
			b.StopTimer()
			m1, m8 := medianOf(one), medianOf(eight)
			b.ReportMetric(float64(m1)/float64(time.Millisecond), "one-ms")
			b.ReportMetric(float64(m8)/float64(time.Millisecond), "eight-ms")
			b.ReportMetric(float64(m8)/float64(m1), "eight/one")
		})
	}
}

func medianOf[T cmp.Ordered](d []T) T {
	d = slices.Clone(d)
	slices.Sort(d)
	return d[len(d)/2]
}

// BenchmarkCallToolConcurrent is P1 under load: 8 and 64 callers at once
// on one stdio server, calling the example server's echo tool, direct
// go-sdk ClientSession.CallTool, bare ("direct") and configured as the
// runtime's session is ("same", see BenchmarkCallTool), against
// Runtime.CallTool. ns/op is the
// time per call (the run's wall time over its b.N calls, shared out
// among the callers), cpu-ns/op this process's CPU per call and
// server-cpu-ns/op the server process's (Linux).
func BenchmarkCallToolConcurrent(b *testing.B) {
	args := map[string]any{"text": "hello"}
	for _, callers := range []int{8, 64} {
		b.Run(fmt.Sprintf("stdio/%d", callers), func(b *testing.B) {
			cmd := exec.Command(demoBin, "serve")
			direct := connectDirect(b, &mcp.CommandTransport{Command: cmd})
			sameCmd := exec.Command(demoBin, "serve")
			same := connectSame(b, &mcp.CommandTransport{Command: sameCmd})
			rt := startBench(b, Options{}, exampleServer("ex"))
			sameProtocol(b, direct, rt)
			sameProtocol(b, same.cs, rt)
			interleave(b, []side{
				{"direct", func(b *testing.B) {
					measureConcurrent(b, callers, cmd.Process.Pid, func(ctx context.Context) error {
						_, err := direct.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: args})
						return err
					})
				}},
				{"same", func(b *testing.B) {
					measureConcurrent(b, callers, sameCmd.Process.Pid, func(ctx context.Context) error {
						_, err := same.callTool(ctx, "echo", args)
						return err
					})
				}},
				{"runtime", func(b *testing.B) {
					measureConcurrent(b, callers, serverPID(rt), func(ctx context.Context) error {
						_, err := rt.CallTool(ctx, "ex__echo", args)
						return err
					})
				}},
			})
		})
	}
}

// measureConcurrent makes b.N calls from callers goroutines at once,
// each taking the next call until b.N were taken, after a warm-up of a
// few calls per caller, and reports the CPU per call as measure does.
func measureConcurrent(b *testing.B, callers, pid int, call func(context.Context) error) {
	ctx := context.Background()
	run := func(n int) error {
		var taken atomic.Int64
		errs := make(chan error, callers)
		var wg sync.WaitGroup
		for range callers {
			wg.Go(func() {
				for taken.Add(1) <= int64(n) {
					if err := call(ctx); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		return <-errs // nil once closed and empty
	}
	if err := run(4 * callers); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	cpu := startCPU(pid)
	b.ResetTimer()
	if err := run(b.N); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	cpu.report(b)
}
