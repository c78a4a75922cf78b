package runtime

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/status"
)

// BenchmarkStartupConcurrency measures Start until every one of 50
// example servers whose initialize takes 100 ms is ready, with
// StartupConcurrency 1 and 8 (G5; target: 8 takes ≤ 0.3× the time of 1).
// Each iteration runs both sides, alternating which goes first, so that
// a change in the machine's load falls on both; it reports the medians
// over the iterations (c1-ms, c8-ms) and the median of the iterations'
// ratios (ratio). Run it with -count 1 and -benchtime Nx: b.Loop runs
// the function once, so the iterations are the runs.
func BenchmarkStartupConcurrency(b *testing.B) {
	const servers, delay = 50, 100 * time.Millisecond
	b.Run(fmt.Sprintf("%dx%v", servers, delay), func(b *testing.B) {
		dir := b.TempDir()
		list := slowServers(servers, delay, b.TempDir())
		testutil.WriteConfig(b, dir, list...)
		var seq, par, ratios []float64
		for i := 0; b.Loop(); i++ {
			one := func() { seq = append(seq, startupMillis(b, dir, 1, servers)) }
			eight := func() { par = append(par, startupMillis(b, dir, 8, servers)) }
			if i%2 == 0 {
				one()
				eight()
			} else {
				eight()
				one()
			}
			ratios = append(ratios, par[i]/seq[i])
		}
		b.ReportMetric(medianOf(seq), "c1-ms")
		b.ReportMetric(medianOf(par), "c8-ms")
		b.ReportMetric(medianOf(ratios), "ratio")
	})
}

// startupMillis starts a runtime on dir with the given concurrency and
// returns the milliseconds from Start until the last of n servers showed
// ready (the time of its event), then shuts it down.
func startupMillis(b *testing.B, dir string, concurrency, n int) float64 {
	b.Helper()
	began := time.Now()
	rt, err := Start(context.Background(), Options{StateDir: dir, StartupConcurrency: concurrency, StopGrace: 500 * time.Millisecond})
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := rt.Shutdown(ctx); err != nil {
			b.Fatal(err)
		}
	}()
	sub := rt.bus.Subscribe(events.SubscribeOptions{From: 1, Buffer: 1 << 14})
	defer sub.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ready := map[string]bool{}
	var last time.Time
	for len(ready) < n {
		e, err := sub.Next(ctx)
		if err != nil {
			b.Fatalf("%d of %d servers ready: %v", len(ready), n, err)
		}
		switch s := e.(type) {
		case events.StateChanged:
			if s.To == string(status.Ready) && !ready[s.Server] {
				ready[s.Server] = true
				last = s.Time
			}
		case events.Dropped:
			b.Fatalf("the subscription fell behind: %v", e)
		}
	}
	return float64(last.Sub(began).Microseconds()) / 1000
}
