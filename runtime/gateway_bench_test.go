package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/tools"
)

// The gateway's costs (X4), beside their targets in `make bench`
// (internal/benchratio): a call through `demo gateway`, how soon a
// registry change reaches a client as tools/list_changed, and how soon
// 100 clients of one gateway all hold the new list.

// BenchmarkGatewayCall compares a go-sdk client calling the example
// server's echo through `demo gateway` (a process of its own, serving a
// state dir whose one server is the example server, over stdio) with the
// same bare client calling the example server directly over stdio; the
// two sides run by turns in each round (interleave). Both clients speak
// the protocol version the go-sdk negotiates with a go-sdk server
// (checked, and logged); the gateway's own upstream leg is the runtime's
// session, which negotiates that version with the example server too
// (BenchmarkCallTool/stdio checks it).
//
// Besides ns/op, B/op, allocs/op (this process's) and p50-ns, each side
// reports cpu-ns/op: the CPU spent on the client's side of the upstream
// server per call, that is this process's for "direct", and this
// process's plus the gateway process's for "gateway" (client-cpu-ns/op
// and gateway-cpu-ns/op apart); server-cpu-ns/op is the example
// server's, on both sides. `make bench` holds gateway/direct to an added
// p50 of at most 0.3 ms and a CPU ratio of at most 2. The gateway's and
// the server's CPU are read from /proc (Linux only, to 10 ms over a run).
func BenchmarkGatewayCall(b *testing.B) {
	if _, err := childCPU(os.Getpid()); err != nil {
		b.Skipf("the gateway's CPU cannot be read here: %v", err)
	}
	b.Run("stdio", func(b *testing.B) {
		args := map[string]any{"text": "hello"}
		cmd := exec.Command(demoBin, "serve")
		direct := connectDirect(b, &mcp.CommandTransport{Command: cmd})
		gw := startGateway(b)
		d, g := direct.InitializeResult().ProtocolVersion, gw.cs.InitializeResult().ProtocolVersion
		if d != g {
			b.Fatalf("direct negotiated %s, the gateway's client %s: not like with like", d, g)
		}
		b.Logf("protocol %s on both sides; the gateway's upstream server is process %d", d, gw.server)
		interleave(b, []side{
			{"direct", func(b *testing.B) {
				measure(b, cmd.Process.Pid, func(ctx context.Context) error {
					_, err := direct.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: args})
					return err
				})
			}},
			{"gateway", func(b *testing.B) {
				measureWith(b, gw.meter, func(ctx context.Context) error {
					res, err := gw.cs.CallTool(ctx, &mcp.CallToolParams{Name: "ex__echo", Arguments: args})
					if err == nil && res.IsError {
						err = fmt.Errorf("ex__echo through the gateway: %s", mcpText(res))
					}
					return err
				})
			}},
		})
	})
}

// gatewayProcess is a `demo gateway` subprocess with a client connected.
type gatewayProcess struct {
	cs          *mcp.ClientSession
	pid, server int // the gateway and its upstream example server (0: not found)
}

// startGateway runs `demo gateway` on a state dir with the example
// server as ex, connects a bare go-sdk client over its stdio and waits
// until the gateway lists ex__echo. Closing the client (when b ends)
// closes the gateway's stdin, and the gateway stops its server.
func startGateway(b *testing.B) *gatewayProcess {
	b.Helper()
	dir := b.TempDir()
	testutil.WriteConfig(b, dir, exampleServer("ex"))
	cmd := exec.Command(demoBin, "gateway", "-state-dir", dir)
	cmd.Env = append(os.Environ(), testutil.MarkerEnv+"="+marker)
	changed := make(chan struct{}, 1)
	client := mcp.NewClient(&mcp.Implementation{Name: "bench"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatalf("connecting to demo gateway: %v", err)
	}
	b.Cleanup(func() { cs.Close() })
	for {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			b.Fatalf("listing the gateway's tools: %v", err)
		}
		if slices.ContainsFunc(res.Tools, func(t *mcp.Tool) bool { return t.Name == "ex__echo" }) {
			break
		}
		select {
		case <-changed:
		case <-ctx.Done():
			b.Fatal("the gateway never listed ex__echo")
		}
	}
	g := &gatewayProcess{cs: cs, pid: cmd.Process.Pid}
	if kids := childPIDs(g.pid); len(kids) == 1 {
		g.server = kids[0]
	}
	return g
}

// meter starts a CPU meter over this process, the gateway and its
// server (see cpuMeter.report).
func (g *gatewayProcess) meter() cpuMeter {
	m := startCPU(g.server)
	var err error
	m.gateway = g.pid
	if m.gatewayCPU, err = childCPU(g.pid); err != nil {
		panic(fmt.Sprintf("the gateway's CPU: %v", err)) // BenchmarkGatewayCall checked /proc
	}
	return m
}

// benchTools are the tool lists the list_changed benchmarks write into
// the registry by turns, as a server named bench: the registry changes
// at the write, with no process or protocol before it, so what is
// measured is the gateway's part alone (its registry subscription, the
// SDK's list_changed, batched 10 ms apart, and the transport).
func benchTools(i int) []tools.Tool {
	schema := json.RawMessage(`{"type":"object"}`)
	list := []tools.Tool{{Name: "bench__a", Server: "bench", OriginalName: "a", InputSchema: schema}}
	if i%2 == 1 {
		list = append(list, tools.Tool{Name: "bench__b", Server: "bench", OriginalName: "b", InputSchema: schema})
	}
	return list
}

// gatewayServer starts a runtime with the example server as ex and
// builds its gateway server, both stopped when b ends.
func gatewayServer(b *testing.B, opts MCPServerOptions) (*Runtime, *mcp.Server) {
	b.Helper()
	rt := startBench(b, Options{}, exampleServer("ex"))
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	srv, err := rt.MCPServer(ctx, opts)
	if err != nil {
		b.Fatal(err)
	}
	return rt, srv
}

// connectInMemory connects a go-sdk client to srv in memory; notified
// gets the time of each tools/list_changed (dropped when full).
func connectInMemory(b *testing.B, srv *mcp.Server, notified chan time.Time) *mcp.ClientSession {
	b.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), st, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ss.Close() })
	client := mcp.NewClient(&mcp.Implementation{Name: "bench"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case notified <- time.Now():
			default:
			}
		},
	})
	cs, err := client.Connect(context.Background(), ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

// BenchmarkGatewayListChanged is how long a registry change takes to
// reach a client of the gateway (in memory, in process): from the write
// into the registry (benchTools) to the client's ToolListChangedHandler.
// It reports the p50 and the slowest over the b.N changes, in
// milliseconds (target: both ≤ 50 ms).
func BenchmarkGatewayListChanged(b *testing.B) {
	rt, srv := gatewayServer(b, MCPServerOptions{})
	notified := make(chan time.Time, 16)
	connectInMemory(b, srv, notified)
	lat := make([]time.Duration, 0, b.N)
	timeout := time.NewTimer(time.Hour)
	b.ResetTimer()
	for i := range b.N {
		for len(notified) > 0 {
			<-notified
		}
		t0 := time.Now()
		if err := rt.Registry().SetServer("bench", benchTools(i)); err != nil {
			b.Fatal(err)
		}
		timeout.Reset(10 * time.Second)
		select {
		case t1 := <-notified:
			lat = append(lat, t1.Sub(t0))
		case <-timeout.C:
			b.Fatalf("change %d: no tools/list_changed in 10s", i)
		}
	}
	b.StopTimer()
	reportLatencies(b, lat, "")
}

// reportLatencies reports the median and the slowest of lat in
// milliseconds, as prefix+"p50-ms" and prefix+"max-ms".
func reportLatencies(b *testing.B, lat []time.Duration, prefix string) {
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(lat[len(lat)/2]), prefix+"p50-ms")
	b.ReportMetric(ms(lat[len(lat)-1]), prefix+"max-ms")
}

// gatewayClients is how many clients BenchmarkGatewayClients and
// TestGatewayHundredClients connect to one gateway.
const gatewayClients = 100

// BenchmarkGatewayClients connects 100 clients in memory to one gateway
// and times, per registry change (benchTools), how long until the last
// of them got its tools/list_changed (notified: the clients only take
// the notification) and until the last of them listed exactly the
// registry's new tools (converged: each client lists on its
// notification, all at once, as a host does), in milliseconds, median
// and slowest over b.N changes. A client that does not get there in 10 s
// fails the benchmark. TestGatewayHundredClients checks the same with
// real servers behind the gateway, a filter and calls.
func BenchmarkGatewayClients(b *testing.B) {
	rt, srv := gatewayServer(b, MCPServerOptions{})
	type client struct {
		cs       *mcp.ClientSession
		notified chan time.Time
	}
	clients := make([]client, gatewayClients)
	for i := range clients {
		clients[i].notified = make(chan time.Time, 16)
		clients[i].cs = connectInMemory(b, srv, clients[i].notified)
	}
	change := 0 // the registry's state, across the sub-benchmarks
	fanout := func(b *testing.B, list bool) {
		var lat []time.Duration
		b.ResetTimer()
		for range b.N {
			for _, c := range clients {
				for len(c.notified) > 0 {
					<-c.notified
				}
			}
			change++
			t0 := time.Now()
			if err := rt.Registry().SetServer("bench", benchTools(change)); err != nil {
				b.Fatal(err)
			}
			want := registryNames(rt, GatewayFilter{})
			var (
				mu   sync.Mutex
				last time.Time
				wg   sync.WaitGroup
				errs = make(chan error, len(clients))
			)
			for _, c := range clients {
				wg.Go(func() {
					done, err := awaitNotified(c.notified)
					if err == nil && list {
						err = awaitList(c.cs, c.notified, want)
						done = time.Now()
					}
					if err != nil {
						errs <- err
						return
					}
					mu.Lock()
					last = later(last, done)
					mu.Unlock()
				})
			}
			wg.Wait()
			close(errs)
			if err := <-errs; err != nil {
				b.Fatalf("change %d: %v", change, err)
			}
			lat = append(lat, last.Sub(t0))
		}
		b.StopTimer()
		reportLatencies(b, lat, "")
	}
	b.Run("notified", func(b *testing.B) { fanout(b, false) })
	b.Run("converged", func(b *testing.B) { fanout(b, true) })
}

// awaitNotified is the next tools/list_changed signal on notified (10 s
// at most): its time, for the benchmarks.
func awaitNotified[T any](notified <-chan T) (T, error) {
	select {
	case v := <-notified:
		return v, nil
	case <-time.After(10 * time.Second):
		var zero T
		return zero, errors.New("no tools/list_changed in 10s")
	}
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// awaitList lists cs's tools until they are want (10 s at most), waiting
// for the next tools/list_changed on notified between two listings (a
// notification of an earlier change may come first).
func awaitList[T any](cs *mcp.ClientSession, notified <-chan T, want []string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		names, err := listNames(ctx, cs)
		if err != nil {
			return err
		}
		if slices.Equal(names, want) {
			return nil
		}
		select {
		case <-notified:
		case <-ctx.Done():
			return fmt.Errorf("the tools were %v, never %v", names, want)
		}
	}
}

// listNames is the sorted names of cs's tools.
func listNames(ctx context.Context, cs *mcp.ClientSession) ([]string, error) {
	var names []string
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("listing tools: %w", err)
		}
		names = append(names, t.Name)
	}
	slices.Sort(names)
	return names, nil
}

// registryNames is the sorted names of rt's tools that f allows: what a
// gateway with that filter must list.
func registryNames(rt *Runtime, f GatewayFilter) []string {
	var names []string
	for _, t := range rt.registry.List() {
		if f.allows(t.Name) {
			names = append(names, t.Name)
		}
	}
	slices.Sort(names)
	return names
}
