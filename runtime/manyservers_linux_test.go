package runtime

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/testutil"
)

// The many-server memory benchmark measures each side in a process of its
// own (this test binary again, running TestManyServersChild), so that no
// two share a heap. The child learns its side and server count from
// manyServersChildEnv ("runtime:50", "direct:1"); with
// manyServersProfileEnv naming a directory it also writes a heap profile
// and a goroutine dump there.
const (
	manyServersChildEnv   = "MCPVISOR_MANYSERVERS_CHILD"
	manyServersProfileEnv = "MCPVISOR_MANYSERVERS_PROFILE"
	manyServersLine       = "manyservers:"
)

// memFigures is what a child measured once settled.
type memFigures struct {
	rssKiB, heapInuseKiB, heapAllocKiB, goroutines float64
}

// BenchmarkManyServersMemory measures P2's memory: what each connected
// stdio server costs the runtime against the go-sdk client, in RSS
// (VmRSS), HeapInuse and HeapAlloc. Each side runs at 1 and at 50 servers
// in child processes of its own per iteration (the sides taking turns at
// going first); a side's per-server cost is (M(50) − M(1)) / 49. The sides
// are the runtime, the bare go-sdk client ("direct", the target's) and a
// go-sdk client with the list-changed handlers the runtime sets
// ("handlers": what a host that follows a server's lists needs). It
// reports the medians over the iterations of each side's per-server
// figures and of the iterations' runtime/direct ratios (rss-ratio,
// heap-ratio on HeapInuse, heapalloc-ratio), with the spread of the first
// two, and the runtime/handlers ratios (rss-ratio-handlers,
// heap-ratio-handlers) with no target. Run it with -count 1 and
// -benchtime Nx.
func BenchmarkManyServersMemory(b *testing.B) {
	all := []string{"runtime", "direct", "handlers"}
	per := map[string]map[string][]float64{}
	for _, side := range all {
		per[side] = map[string][]float64{}
	}
	ratios := map[string][]float64{}
	for i := 0; b.Loop(); i++ {
		sides := append(slices.Clone(all[i%len(all):]), all[:i%len(all)]...)
		cost := map[string]memFigures{}
		for _, side := range sides {
			one, many := manyServersChild(b, side, 1), manyServersChild(b, side, manyServers)
			c := memFigures{
				rssKiB:       (many.rssKiB - one.rssKiB) / (manyServers - 1),
				heapInuseKiB: (many.heapInuseKiB - one.heapInuseKiB) / (manyServers - 1),
				heapAllocKiB: (many.heapAllocKiB - one.heapAllocKiB) / (manyServers - 1),
				goroutines:   (many.goroutines - one.goroutines) / (manyServers - 1),
			}
			cost[side] = c
			per[side]["rss"] = append(per[side]["rss"], c.rssKiB)
			per[side]["heap"] = append(per[side]["heap"], c.heapInuseKiB)
			per[side]["heapalloc"] = append(per[side]["heapalloc"], c.heapAllocKiB)
			per[side]["goroutines"] = append(per[side]["goroutines"], c.goroutines)
		}
		ratios["rss"] = append(ratios["rss"], cost["runtime"].rssKiB/cost["direct"].rssKiB)
		ratios["heap"] = append(ratios["heap"], cost["runtime"].heapInuseKiB/cost["direct"].heapInuseKiB)
		ratios["heapalloc"] = append(ratios["heapalloc"], cost["runtime"].heapAllocKiB/cost["direct"].heapAllocKiB)
		ratios["rss-handlers"] = append(ratios["rss-handlers"], cost["runtime"].rssKiB/cost["handlers"].rssKiB)
		ratios["heap-handlers"] = append(ratios["heap-handlers"], cost["runtime"].heapInuseKiB/cost["handlers"].heapInuseKiB)
	}
	for _, side := range all {
		b.ReportMetric(medianOf(per[side]["rss"]), side+"-rss-KiB/server")
		b.ReportMetric(medianOf(per[side]["heap"]), side+"-heap-KiB/server")
		b.ReportMetric(medianOf(per[side]["heapalloc"]), side+"-heapalloc-KiB/server")
		b.ReportMetric(medianOf(per[side]["goroutines"]), side+"-goroutines/server")
	}
	b.ReportMetric(medianOf(ratios["rss"]), "rss-ratio")
	b.ReportMetric(medianOf(ratios["heap"]), "heap-ratio")
	b.ReportMetric(medianOf(ratios["heapalloc"]), "heapalloc-ratio")
	b.ReportMetric(medianOf(ratios["rss-handlers"]), "rss-ratio-handlers")
	b.ReportMetric(medianOf(ratios["heap-handlers"]), "heap-ratio-handlers")
	reportSpread(b, ratios["rss"], "rss-ratio")
	reportSpread(b, ratios["heap"], "heap-ratio")
}

// manyServersChild runs TestManyServersChild for side with n servers in a
// process of its own and returns what it measured.
func manyServersChild(b *testing.B, side string, n int) memFigures {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run", "^TestManyServersChild$", "-test.count", "1")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s:%d", manyServersChildEnv, side, n))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("the %s child with %d servers: %v\n%s%s", side, n, err, out, stderr.Bytes())
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), manyServersLine)
		if !ok {
			continue
		}
		var f memFigures
		if _, err := fmt.Sscanf(rest, " rss-kib=%g heapinuse-kib=%g heapalloc-kib=%g goroutines=%g", &f.rssKiB, &f.heapInuseKiB, &f.heapAllocKiB, &f.goroutines); err != nil {
			b.Fatalf("the %s child with %d servers printed %q: %v", side, n, sc.Text(), err)
		}
		return f
	}
	b.Fatalf("the %s child with %d servers printed no figures:\n%s", side, n, out)
	return memFigures{}
}

// TestManyServersChild is the child of BenchmarkManyServersMemory: it runs
// only when manyServersChildEnv is set. It connects the servers, settles
// (every server ready with its tools listed, then a GC that returns freed
// memory to the system), prints its figures and stops every server.
func TestManyServersChild(t *testing.T) {
	spec := os.Getenv(manyServersChildEnv)
	if spec == "" {
		t.Skip("the child of BenchmarkManyServersMemory")
	}
	if os.Getenv(manyServersProfileEnv) != "" {
		// Every allocation from here on, not one in 512 KiB: the
		// profile is of what each of a few dozen servers holds.
		goruntime.MemProfileRate = 1
	}
	side, count, _ := strings.Cut(spec, ":")
	n, err := strconv.Atoi(count)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want side:count", manyServersChildEnv, spec)
	}
	switch side {
	case "direct", "handlers":
		var opts *mcp.ClientOptions
		if side == "handlers" {
			opts = listChangedOptions()
		}
		// The lists are kept as a host keeps the tools it offers (the
		// runtime holds them in its registry).
		sessions, lists, _, _ := connectSequence(t, n, opts)
		defer closeAll(sessions)
		reportMemory(t)
		goruntime.KeepAlive(lists)
	case "runtime":
		rt := startManyServers(t, n)
		reportMemory(t)
		shutdown(t, rt)
	default:
		t.Fatalf("%s=%q: side is runtime, direct or handlers", manyServersChildEnv, spec)
	}
}

// startManyServers starts a runtime with n example servers, one at a time
// (StartupConcurrency 1), and returns once every one of them is ready and
// its tools are registered.
func startManyServers(t *testing.T, n int) *Runtime {
	t.Helper()
	dir := t.TempDir()
	list := make([]config.Server, n)
	for i := range list {
		list[i] = exampleServer(fmt.Sprintf("s%02d", i))
	}
	testutil.WriteConfig(t, dir, list...)
	rt, err := Start(context.Background(), Options{StateDir: dir, StartupConcurrency: 1, StopGrace: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	// First, so that a Fatal below (or in the caller) still stops every
	// server; the caller's own Shutdown makes this one a no-op.
	t.Cleanup(func() { shutdown(t, rt) })
	sub := rt.bus.Subscribe(events.SubscribeOptions{From: 1, Buffer: 1 << 12})
	defer sub.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	listed := map[string]bool{}
	for len(listed) < n {
		e, err := sub.Next(ctx)
		if err != nil {
			t.Fatalf("%d of %d servers listed: %v", len(listed), n, err)
		}
		switch e := e.(type) {
		case events.ToolsChanged:
			listed[e.Server] = true
		case events.Dropped:
			t.Fatalf("the subscription fell behind: %v", e)
		}
	}
	return rt
}

// shutdown shuts rt down within a minute (a second time is a no-op).
func shutdown(t *testing.T, rt *Runtime) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := rt.Shutdown(ctx); err != nil {
		t.Error(err)
	}
}

// reportMemory settles the heap and prints this process's figures (and,
// when asked, writes a heap profile and a goroutine dump).
func reportMemory(t *testing.T) {
	t.Helper()
	goruntime.GC()
	debug.FreeOSMemory()
	var ms goruntime.MemStats
	goruntime.ReadMemStats(&ms)
	rss := vmRSSKiB(t)
	if dir := os.Getenv(manyServersProfileEnv); dir != "" {
		writeProfile(t, filepath.Join(dir, "heap.pprof"), "heap", 0)
		writeProfile(t, filepath.Join(dir, "goroutines.txt"), "goroutine", 1)
	}
	fmt.Printf("%s rss-kib=%d heapinuse-kib=%d heapalloc-kib=%d goroutines=%d\n", manyServersLine,
		rss, ms.HeapInuse/1024, ms.HeapAlloc/1024, goruntime.NumGoroutine())
}

// writeProfile writes the named pprof profile to path.
func writeProfile(t *testing.T, path, name string, debugLevel int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := pprof.Lookup(name).WriteTo(f, debugLevel); err != nil {
		t.Fatal(err)
	}
}

// vmRSSKiB reads this process's resident set size from /proc/self/status.
func vmRSSKiB(t *testing.T) int {
	t.Helper()
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kib, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			if err != nil {
				t.Fatalf("VmRSS line %q: %v", line, err)
			}
			return kib
		}
	}
	t.Fatal("no VmRSS in /proc/self/status")
	return 0
}
