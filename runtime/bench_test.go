package runtime

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/internal/exampleserver"
	"github.com/openprogram/mcpvisor/internal/testutil"
)

// BenchmarkCallTool compares Runtime.CallTool with a direct go-sdk
// ClientSession.CallTool on the same example server, over stdio, in
// memory and over Streamable HTTP, on three sides run by turns in each
// round (interleave): "direct", a bare client; "same", a direct client
// configured as the runtime's session is (sameClient: the capabilities
// it advertises, the _meta it sends); "runtime". `make bench` prints
// runtime/same (the cost of our layer, the P1 targets) and, with no
// target, runtime/direct (that plus what the advertised features cost). Besides ns/op, B/op and allocs/op it
// reports p50-ns (median latency) and cpu-ns/op (this process's
// user+system CPU). For stdio that is the client side only, and
// server-cpu-ns/op is the server process's (Linux: /proc/PID/stat, to
// 10 ms over the run); in memory and over HTTP the server runs in this
// process, so that cpu-ns/op and allocs/op count its work too.
//
// Both sides speak the same protocol version: stdio and in memory
// negotiate 2026-07-28; the SDK's (stateful) Streamable HTTP handler
// refuses it, so HTTP runs 2025-11-25 on both (checked, and logged).
func BenchmarkCallTool(b *testing.B) {
	args := map[string]any{"text": "hello"}
	// Both sides are set up before either is measured, so that both run
	// with the same live heap (and so the same GC pacing).
	pair := func(b *testing.B, direct *mcp.ClientSession, same *sameClient, rt *Runtime, directPID, samePID int) {
		sameProtocol(b, direct, rt)
		sameProtocol(b, same.cs, rt)
		interleave(b, []side{
			{"direct", func(b *testing.B) {
				measure(b, directPID, func(ctx context.Context) error {
					_, err := direct.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: args})
					return err
				})
			}},
			{"same", func(b *testing.B) {
				measure(b, samePID, func(ctx context.Context) error {
					_, err := same.callTool(ctx, "echo", args)
					return err
				})
			}},
			{"runtime", func(b *testing.B) {
				measure(b, serverPID(rt), func(ctx context.Context) error {
					_, err := rt.CallTool(ctx, "ex__echo", args)
					return err
				})
			}},
		})
	}
	b.Run("stdio", func(b *testing.B) {
		cmd := exec.Command(demoBin, "serve")
		direct := connectDirect(b, &mcp.CommandTransport{Command: cmd})
		sameCmd := exec.Command(demoBin, "serve")
		same := connectSame(b, &mcp.CommandTransport{Command: sameCmd})
		rt := startBench(b, Options{}, exampleServer("ex"))
		pair(b, direct, same, rt, cmd.Process.Pid, sameCmd.Process.Pid)
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
		same := connectSame(b, inMemory())
		opts := Options{transport: func(config.Server) mcp.Transport { return inMemory() }}
		rt := startBench(b, opts, config.Server{Name: "ex", Type: config.TypeLocal, Command: []string{"in-memory"}, Enabled: true})
		pair(b, direct, same, rt, 0, 0)
	})
	b.Run("http", func(b *testing.B) {
		url := serveHTTP(b)
		direct := connectDirect(b, &mcp.StreamableClientTransport{Endpoint: url})
		same := connectSame(b, &mcp.StreamableClientTransport{Endpoint: url})
		rt := startBench(b, Options{}, config.Server{Name: "ex", Type: config.TypeHTTP, URL: url, Enabled: true})
		pair(b, direct, same, rt, 0, 0)
	})
}

// side is one side of a compared benchmark: its sub-benchmark name and
// body.
type side struct {
	name string
	run  func(b *testing.B)
}

// interleave runs the sides one after another, MCPVISOR_BENCH_ROUNDS
// times (default 1), so that run i of each side ran next to run i of the
// others: `go test -count N` would run each side N times in a row, and a
// machine whose load drifts would then favour one side. Round i starts
// at side i mod len(sides) (direct, same, runtime; then same, runtime,
// direct; …), so no side always runs first, on a cache or a heap the
// round's previous side left. The testing package names the repeats
// side#01, side#02, … in the order they ran, so the k-th result of each
// side is its run in round k: benchratio strips the suffix and pairs the
// k-th runs.
func interleave(b *testing.B, sides []side) {
	rounds := 1
	if v := os.Getenv("MCPVISOR_BENCH_ROUNDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("MCPVISOR_BENCH_ROUNDS=%q: want a positive count", v)
		}
		rounds = n
	}
	for round := range rounds {
		for j := range sides {
			s := sides[(round+j)%len(sides)]
			b.Run(s.name, s.run)
		}
	}
}

// Each round of interleave starts at the next side, and every side runs
// once per round.
func TestInterleaveRotates(t *testing.T) {
	t.Setenv("MCPVISOR_BENCH_ROUNDS", "4")
	var ran []string
	record := func(name string) func(*testing.B) {
		return func(b *testing.B) {
			if b.N == 1 { // each b.Run probes with N = 1 first, once
				ran = append(ran, name)
			}
		}
	}
	testing.Benchmark(func(b *testing.B) {
		interleave(b, []side{{"a", record("a")}, {"b", record("b")}, {"c", record("c")}})
	})
	want := []string{"a", "b", "c", "b", "c", "a", "c", "a", "b", "a", "b", "c"}
	if !slices.Equal(ran, want) {
		t.Errorf("sides ran in order %v, want %v", ran, want)
	}
}

// serveHTTP serves the example server over Streamable HTTP on 127.0.0.1
// until the benchmark ends (its cleanups run after those of the sessions
// registered later), and returns its URL.
func serveHTTP(b *testing.B) string {
	b.Helper()
	server := exampleserver.NewServer(exampleserver.Options{})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	b.Cleanup(ts.Close)
	return ts.URL
}

// sameProtocol fails the benchmark unless both sides negotiated the same
// protocol version, and logs it: the versions differ in per-call work.
func sameProtocol(b *testing.B, direct *mcp.ClientSession, rt *Runtime) {
	b.Helper()
	d, r := direct.InitializeResult().ProtocolVersion, rt.Status().Servers[0].ProtocolVersion
	if d != r {
		b.Fatalf("direct negotiated %s, the runtime %s: not like with like", d, r)
	}
	b.Logf("protocol %s on both sides", d)
}

// serverPID is the process of rt's one server (0: none, in process).
func serverPID(rt *Runtime) int { return rt.Status().Servers[0].PID }

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
// median latency, the CPU this process spent per call and, with a server
// process pid (not 0), the server's (see serverCPU).
func measure(b *testing.B, pid int, call func(context.Context) error) {
	measureWith(b, func() cpuMeter { return startCPU(pid) }, call)
}

// measureWith is measure with the CPU meter start returns, started just
// before the timed loop.
func measureWith(b *testing.B, start func() cpuMeter, call func(context.Context) error) {
	ctx := context.Background()
	for range 50 {
		if err := call(ctx); err != nil {
			b.Fatal(err)
		}
	}
	lat := make([]time.Duration, b.N)
	b.ReportAllocs()
	cpu := start()
	b.ResetTimer()
	for i := range b.N {
		t0 := time.Now()
		if err := call(ctx); err != nil {
			b.Fatal(err)
		}
		lat[i] = time.Since(t0)
	}
	b.StopTimer()
	cpu.report(b)
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
}

// cpuMeter measures CPU over a benchmark's timed loop: this process's
// and, for a server process (pid not 0), the server's.
type cpuMeter struct {
	self, server time.Duration
	pid          int
	// gateway, when not 0, is a gateway process between this one and
	// the server: cpu-ns/op then counts its CPU too (gatewayMeter).
	gateway    int
	gatewayCPU time.Duration
}

func startCPU(pid int) cpuMeter {
	m := cpuMeter{self: cpuTime(), pid: pid}
	if pid != 0 {
		var err error
		if m.server, err = childCPU(pid); err != nil {
			m.pid = 0 // not on this system: no figure rather than a wrong one
		}
	}
	return m
}

// report reports cpu-ns/op and, if measured, server-cpu-ns/op (and a
// gateway's, see gatewayMeter).
func (m cpuMeter) report(b *testing.B) {
	self := cpuTime() - m.self
	if m.gateway != 0 {
		gw, err := childCPU(m.gateway)
		if err != nil {
			b.Fatalf("the gateway's CPU: %v", err)
		}
		b.ReportMetric(float64((gw-m.gatewayCPU).Nanoseconds())/float64(b.N), "gateway-cpu-ns/op")
		b.ReportMetric(float64(self.Nanoseconds())/float64(b.N), "client-cpu-ns/op")
		self += gw - m.gatewayCPU
	}
	b.ReportMetric(float64(self.Nanoseconds())/float64(b.N), "cpu-ns/op")
	if m.pid == 0 {
		return
	}
	server, err := childCPU(m.pid)
	if err != nil {
		b.Fatalf("the server's CPU: %v", err)
	}
	b.ReportMetric(float64((server-m.server).Nanoseconds())/float64(b.N), "server-cpu-ns/op")
}
