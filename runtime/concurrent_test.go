package runtime

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/openprogram/mcpvisor/config"
)

// Fifty management calls at once, each on its own server: every one
// succeeds, the file parses at every moment, and the end state is what any
// serial order of them gives.
func TestConcurrentManagementCalls(t *testing.T) {
	var initial []config.Server
	for i := range 13 {
		initial = append(initial, exampleServer(fmt.Sprintf("p%02d", i)))
		d := exampleServer(fmt.Sprintf("d%02d", i))
		d.Enabled = false
		initial = append(initial, d)
	}
	rt := start(t, Options{}, initial...)
	for i := range 13 {
		rt.waitSettled(t, fmt.Sprintf("p%02d", i))
	}
	path := filepath.Join(rt.dir, config.FileName)

	var reads, badReads atomic.Int64
	stop := make(chan struct{})
	var watcher sync.WaitGroup
	watcher.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			data, err := os.ReadFile(path)
			if err == nil {
				reads.Add(1)
				if _, err := config.Parse(data); err != nil {
					badReads.Add(1)
				}
			}
		}
	})

	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 50)
	for i := range 50 {
		wg.Go(func() {
			var err error
			switch n := i / 4; i % 4 {
			case 0: // 13 adds, every other one enabled
				s := exampleServer(fmt.Sprintf("n%02d", n))
				s.Enabled = n%2 == 0
				_, err = rt.AddServer(ctx, s)
			case 1: // 13 patches that restart
				_, err = rt.PatchServer(ctx, fmt.Sprintf("p%02d", n), fmt.Appendf(nil, `{"timeout_seconds": %d}`, 10+n))
			case 2: // 12 removals
				err = rt.RemoveServer(ctx, fmt.Sprintf("d%02d", n))
			case 3: // 12 reads
				_, err = rt.Server(fmt.Sprintf("p%02d", n))
			}
			if err != nil {
				errs <- fmt.Errorf("op %d: %w", i, err)
			}
		})
	}
	wg.Wait()
	close(stop)
	watcher.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if badReads.Load() > 0 || reads.Load() == 0 {
		t.Fatalf("%d of %d reads of the file did not parse", badReads.Load(), reads.Load())
	}

	f, err := config.Store{Dir: func() (string, error) { return rt.dir, nil }}.Load()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"d12"} // the one removal that was not asked for
	for i := range 13 {
		want = append(want, fmt.Sprintf("p%02d", i))
		if s, _ := f.Get(fmt.Sprintf("p%02d", i)); s.TimeoutSeconds != 10+i {
			t.Errorf("p%02d timeout in the file = %d, want %d", i, s.TimeoutSeconds, 10+i)
		}
	}
	for n := range 13 {
		want = append(want, fmt.Sprintf("n%02d", n))
	}
	var got []string
	for _, s := range f.Servers {
		got = append(got, s.Name)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("servers in the file = %v, want %v", got, want)
	}
	var running []string
	for _, e := range rt.Servers() {
		running = append(running, e.Name)
	}
	slices.Sort(running)
	if !slices.Equal(running, want) {
		t.Fatalf("configured servers = %v, want %v", running, want)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", fi.Mode())
	}
}
