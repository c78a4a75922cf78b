package runtime

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/internal/testutil"
)

// manyServers is how many stdio servers the many-server benchmarks run (P2).
const manyServers = 50

// BenchmarkManyServersReady measures P2's startup: with StartupConcurrency
// 1, Start until all 50 example servers (`demo serve`) are ready, against
// 50 direct go-sdk connects of the same binary one after another. Each
// iteration runs both sides, alternating which goes first. The direct side
// connects and lists each server's tools (what makes a server ready for
// the runtime: its tools are registered); direct-ms is the sum of the
// connects alone, direct-list-ms the whole sequence. It reports the medians
// over the iterations and the medians of the iterations' ratios,
// ratio-connect (runtime / connects alone) and ratio-list (runtime /
// connect + list, the target), with ratio-list's spread. Run it with
// -count 1 and -benchtime Nx.
func BenchmarkManyServersReady(b *testing.B) {
	dir := b.TempDir()
	list := make([]config.Server, manyServers)
	for i := range list {
		list[i] = exampleServer(fmt.Sprintf("s%02d", i))
	}
	testutil.WriteConfig(b, dir, list...)
	var rts, conns, lists, ratioConnect, ratioList []float64
	for i := 0; b.Loop(); i++ {
		run := func() { rts = append(rts, startupMillis(b, dir, 1, manyServers)) }
		direct := func() {
			c, l := directSequence(b, manyServers)
			conns, lists = append(conns, c), append(lists, l)
		}
		if i%2 == 0 {
			run()
			direct()
		} else {
			direct()
			run()
		}
		ratioConnect = append(ratioConnect, rts[i]/conns[i])
		ratioList = append(ratioList, rts[i]/lists[i])
	}
	b.ReportMetric(medianOf(rts), "runtime-ms")
	b.ReportMetric(medianOf(conns), "direct-ms")
	b.ReportMetric(medianOf(lists), "direct-list-ms")
	b.ReportMetric(medianOf(ratioConnect), "ratio-connect")
	b.ReportMetric(medianOf(ratioList), "ratio-list")
	reportSpread(b, ratioList, "ratio-list")
}

// reportSpread reports the lowest and highest of an iteration's figures
// (name-lo, name-hi): on shared cores the spread says how far to trust
// the median.
func reportSpread(b *testing.B, d []float64, name string) {
	b.ReportMetric(slices.Min(d), name+"-lo")
	b.ReportMetric(slices.Max(d), name+"-hi")
}

// directSequence connects n example servers with the bare go-sdk client
// one after another, listing each one's tools once it is connected, and
// returns the milliseconds the connects took (summed) and the whole
// sequence took; then it closes them all (outside the measurement).
func directSequence(b *testing.B, n int) (connectMs, totalMs float64) {
	b.Helper()
	sessions, _, connects, total := connectSequence(b, n, nil)
	closeAll(sessions)
	return float64(connects.Microseconds()) / 1000, float64(total.Microseconds()) / 1000
}

// connectSequence connects n example servers directly one after another,
// listing each one's tools after its connect, and returns the sessions,
// their tool lists, the time the connects took and the time of the whole
// sequence. opts are the client's options (nil: the bare client).
func connectSequence(tb testing.TB, n int, opts *mcp.ClientOptions) (sessions []*mcp.ClientSession, lists []*mcp.ListToolsResult, connects, total time.Duration) {
	tb.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "bench"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	began := time.Now()
	for range n {
		cmd := exec.Command(demoBin, "serve")
		cmd.Env = append(os.Environ(), testutil.MarkerEnv+"="+marker)
		t0 := time.Now()
		cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			closeAll(sessions)
			tb.Fatal(err)
		}
		connects += time.Since(t0)
		sessions = append(sessions, cs)
		l, err := cs.ListTools(ctx, nil)
		if err != nil {
			closeAll(sessions)
			tb.Fatal(err)
		}
		lists = append(lists, l)
	}
	return sessions, lists, connects, time.Since(began)
}

// listChangedOptions are the options of a go-sdk client that follows the
// server's lists as the runtime does: a handler for each list-changed
// notification (tools, prompts, resources). With them the SDK also keeps a
// subscriptions/listen stream open on a session whose protocol has one.
func listChangedOptions() *mcp.ClientOptions {
	return &mcp.ClientOptions{
		ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) {},
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) {},
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {},
	}
}

// closeAll closes the sessions at once (each Close waits for its process).
func closeAll(sessions []*mcp.ClientSession) {
	var wg sync.WaitGroup
	for _, cs := range sessions {
		wg.Go(func() { cs.Close() })
	}
	wg.Wait()
}
