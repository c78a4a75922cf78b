package runtime

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"
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
