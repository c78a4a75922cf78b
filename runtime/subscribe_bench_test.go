package runtime

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/exampleserver"
)

// A subscriber that never reads slows nothing. Each benchmark here runs
// the same thing "alone" and "subscribed" (with one Runtime.Subscribe
// that is never read and one GET /api/mcp/events whose client never
// reads), and `make bench` prints the pair with the ratio.

// neverReading attaches a subscription and an SSE client to rt, neither
// of which ever reads; the returned func detaches both.
func neverReading(b *testing.B, rt *Runtime) func() {
	b.Helper()
	sub := rt.Subscribe(events.SubscribeOptions{})
	ts := eventsServer(b, rt)
	c := openEvents(b, ts, "/api/mcp/events", nil)
	waitOpen(b, rt, 1)
	return func() {
		sub.Close()
		c.close()
		ts.Close()
	}
}

// BenchmarkCallToolSubscriber compares Runtime.CallTool alone and with a
// never-reading subscriber attached, on the example server over stdio and
// in memory (as BenchmarkCallTool).
func BenchmarkCallToolSubscriber(b *testing.B) {
	args := map[string]any{"text": "hello"}
	call := func(rt *Runtime) func(context.Context) error {
		return func(ctx context.Context) error {
			_, err := rt.CallTool(ctx, "ex__echo", args)
			return err
		}
	}
	pair := func(b *testing.B, rt *Runtime) {
		b.Run("alone", func(b *testing.B) { measure(b, 0, call(rt)) })
		b.Run("subscribed", func(b *testing.B) {
			defer neverReading(b, rt)()
			measure(b, 0, call(rt))
		})
	}
	b.Run("stdio", func(b *testing.B) {
		pair(b, startBench(b, Options{}, exampleServer("ex")))
	})
	b.Run("inmemory", func(b *testing.B) {
		server := exampleserver.NewServer(exampleserver.Options{})
		opts := Options{transport: func(config.Server) mcp.Transport {
			ct, st := mcp.NewInMemoryTransports()
			if _, err := server.Connect(context.Background(), st, nil); err != nil {
				b.Fatal(err)
			}
			return ct
		}}
		pair(b, startBench(b, opts, config.Server{Name: "ex", Type: config.TypeLocal, Command: []string{"in-memory"}, Enabled: true}))
	})
}

// BenchmarkRecoverySubscriber measures SIGKILL to ready again (as
// BenchmarkRecovery) alone and with a never-reading subscriber, each on a
// runtime of its own so that both measure the first backoff. Run it with
// -benchtime 1x.
func BenchmarkRecoverySubscriber(b *testing.B) {
	killOnce := func(b *testing.B, subscribed bool) {
		rt := startBench(b, Options{StopGrace: 200 * time.Millisecond}, exampleServer("ex"))
		pid := waitReadyPID(b, rt, "ex", 0)
		if subscribed {
			defer neverReading(b, rt)()
		}
		b.ResetTimer()
		measureRecovery(b, rt, pid)
		b.StopTimer()
		reportRetryToReady(b, rt)
	}
	b.Run("stdio", func(b *testing.B) {
		b.Run("alone", func(b *testing.B) { killOnce(b, false) })
		b.Run("subscribed", func(b *testing.B) { killOnce(b, true) })
	})
}

// reportRetryToReady reports, from rt's event history, the time from the
// last backoff's next_retry_at to ready again: the recovery without its
// scheduled delay, whose ±20 % jitter (200 ms ± 40 ms by default) would
// hide a difference of a few milliseconds between alone and subscribed.
func reportRetryToReady(b *testing.B, rt *Runtime) {
	b.Helper()
	sub := rt.bus.Subscribe(events.SubscribeOptions{Server: "ex", From: 1})
	defer sub.Close()
	drained, cancel := context.WithCancel(context.Background())
	cancel() // Next hands over the replayed history, then says ctx is done
	var retryAt, readyAt time.Time
	for {
		e, err := sub.Next(drained)
		if err != nil {
			break
		}
		if s, ok := e.(events.StateChanged); ok {
			switch {
			case s.To == "backoff":
				retryAt, readyAt = s.NextRetryAt, time.Time{}
			case s.To == "ready" && !retryAt.IsZero() && readyAt.IsZero():
				readyAt = s.Time
			}
		}
	}
	if retryAt.IsZero() || readyAt.IsZero() {
		b.Fatal("the history holds no backoff followed by ready")
	}
	b.ReportMetric(float64(readyAt.Sub(retryAt).Microseconds())/1000, "ms/retry-to-ready")
}
