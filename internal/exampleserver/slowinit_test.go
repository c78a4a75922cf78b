package exampleserver

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Two servers sharing an -initialize-dir whose handshakes overlap each
// record two in flight; a third, connected after both answered, records
// one; every handshake waits at least the delay; no in-flight file is
// left.
func TestInitializeDelayRecordsInFlight(t *testing.T) {
	dir := t.TempDir()
	const delay = 300 * time.Millisecond
	connect := func(name string) time.Duration {
		return connectSlow(t, Options{Name: name, InitializeDelay: delay, InitializeDir: dir, Stderr: os.Stderr})
	}
	// a and b connect at once: their handshakes overlap by most of the
	// delay, so the later of the two to count sees the other's file.
	var wg sync.WaitGroup
	took := make([]time.Duration, 2)
	for i, name := range []string{"a", "b"} {
		wg.Go(func() { took[i] = connect(name) })
	}
	wg.Wait()
	took = append(took, connect("c"))
	for i, d := range took {
		if d < delay {
			t.Errorf("connect %d took %v, want at least the delay %v", i, d, delay)
		}
	}
	log, err := os.ReadFile(filepath.Join(dir, InitializeLog))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(log)), "\n")
	if len(lines) != 3 || lines[2] != "c 1" {
		t.Fatalf("log = %q, want a and b (in any order, one of them seeing 2), then \"c 1\"", log)
	}
	first := lines[:2]
	slices.Sort(first)
	if !(first[0] == "a 2" || first[1] == "b 2") {
		t.Errorf("log = %q: neither overlapping handshake saw the other", log)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), inflightPrefix) {
			t.Errorf("in-flight file %s left after the answers", e.Name())
		}
	}
}

// connectSlow connects a client to a server of opts in memory and
// returns how long the connect took (0 if it failed: the test is failed).
func connectSlow(t *testing.T, opts Options) time.Duration {
	t.Helper()
	srv := NewServer(opts)
	began := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	serverT, clientT := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, serverT, nil)
	if err != nil {
		t.Errorf("server Connect: %v", err)
		return 0
	}
	cs, err := newClient().Connect(ctx, clientT, nil)
	took := time.Since(began)
	if err != nil {
		ss.Close()
		t.Errorf("client Connect: %v", err)
		return 0
	}
	cs.Close()
	ss.Wait()
	return took
}

// With -initialize-barrier 3 the first three handshakes wait for each
// other, so the third to record itself sees all three in flight whatever
// the machine's load; a fourth, after the barrier was reached, does not
// wait; and one whose barrier is never reached goes on after its bound.
func TestInitializeBarrier(t *testing.T) {
	dir := t.TempDir()
	opts := func(name string) Options {
		return Options{Name: name, InitializeDir: dir, InitializeBarrier: 3, Stderr: os.Stderr}
	}
	var wg sync.WaitGroup
	for _, name := range []string{"a", "b", "c"} {
		wg.Go(func() { connectSlow(t, opts(name)) })
	}
	wg.Wait()
	connectSlow(t, opts("d"))
	log, err := os.ReadFile(filepath.Join(dir, InitializeLog))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(log)), "\n")
	if len(lines) != 4 || !slices.ContainsFunc(lines[:3], func(l string) bool { return strings.HasSuffix(l, " 3") }) || lines[3] != "d 1" {
		t.Errorf("log = %q, want a, b and c, one of them seeing 3 in flight, then \"d 1\"", log)
	}

	alone := Options{Name: "e", InitializeDir: t.TempDir(), InitializeBarrier: 2, InitializeBarrierWait: 50 * time.Millisecond, Stderr: os.Stderr}
	if took := connectSlow(t, alone); took < alone.InitializeBarrierWait {
		t.Errorf("a barrier never reached held the connect %v, want its bound %v", took, alone.InitializeBarrierWait)
	}
}
