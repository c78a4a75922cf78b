package runtime

import (
	"context"
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/internal/exampleserver"
	"github.com/openprogram/mcpvisor/internal/testutil"
)

// BenchmarkCallTool compares Runtime.CallTool with a direct go-sdk
// ClientSession.CallTool on the same example server. `make bench` prints
// each runtime/direct pair side by side with the ratio. Besides ns/op,
// B/op and allocs/op it reports p50-ns (median latency) and cpu-ns/op (this
// process's user+system CPU; for stdio that is the client side only).
func BenchmarkCallTool(b *testing.B) {
	args := map[string]any{"text": "hello"}
	// Both sides are set up before either is measured, so that both run
	// with the same live heap (and so the same GC pacing).
	pair := func(b *testing.B, direct *mcp.ClientSession, rt *Runtime) {
		b.Run("direct", func(b *testing.B) {
			measure(b, func(ctx context.Context) error {
				_, err := direct.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: args})
				return err
			})
		})
		b.Run("runtime", func(b *testing.B) {
			measure(b, func(ctx context.Context) error {
				_, err := rt.CallTool(ctx, "ex__echo", args)
				return err
			})
		})
	}
	b.Run("stdio", func(b *testing.B) {
		direct := connectDirect(b, &mcp.CommandTransport{Command: exec.Command(demoBin, "serve")})
		rt := startBench(b, Options{}, exampleServer("ex"))
		pair(b, direct, rt)
	})
	b.Run("inmemory", func(b *testing.B) {
		server := exampleserver.NewServer(exampleserver.Options{})
		inMemory := func() mcp.Transport {
			ct, st := mcp.NewInMemoryTransports()
			if _, err := server.Connect(context.Background(), st, nil); err != nil {
				b.Fatal(err)
			}
			return ct
		}
		direct := connectDirect(b, inMemory())
		opts := Options{transport: func(config.Server) mcp.Transport { return inMemory() }}
		rt := startBench(b, opts, config.Server{Name: "ex", Type: config.TypeLocal, Command: []string{"in-memory"}, Enabled: true})
		pair(b, direct, rt)
	})
}

func connectDirect(b *testing.B, t mcp.Transport) *mcp.ClientSession {
	b.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil)
	cs, err := client.Connect(context.Background(), t, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

func startBench(b *testing.B, opts Options, srv config.Server) *Runtime {
	b.Helper()
	dir := b.TempDir()
	testutil.WriteConfig(b, dir, srv)
	opts.StateDir = dir
	rt, err := Start(context.Background(), opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := rt.Shutdown(ctx); err != nil {
			b.Error(err)
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for len(rt.Tools()) == 0 {
		if time.Now().After(deadline) {
			b.Fatalf("server not ready: %+v", rt.Status())
		}
		time.Sleep(time.Millisecond)
	}
	return rt
}

// measure runs call b.N times after a short warm-up and reports the
// median latency and the CPU this process spent per call.
func measure(b *testing.B, call func(context.Context) error) {
	ctx := context.Background()
	for range 50 {
		if err := call(ctx); err != nil {
			b.Fatal(err)
		}
	}
	lat := make([]time.Duration, b.N)
	b.ReportAllocs()
	cpu0 := cpuTime()
	b.ResetTimer()
	for i := range b.N {
		t0 := time.Now()
		if err := call(ctx); err != nil {
			b.Fatal(err)
		}
		lat[i] = time.Since(t0)
	}
	b.StopTimer()
	cpu := cpuTime() - cpu0
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
