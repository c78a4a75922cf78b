package runtime

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/openprogram/mcpvisor/config"
)

// TestHTTPConcurrentWrites: 50 concurrent POST/PATCH/DELETE/GET requests,
// each on a server of its own, under -race. The file parses at every
// moment, and the end state is the one any serial order gives: every
// request's effect, the untouched entries in their file order and the
// added ones after them.
func TestHTTPConcurrentWrites(t *testing.T) {
	const n = 50
	var initial []config.Server
	for i := range n {
		if i%5 == 0 || i%5 == 4 { // POSTed below
			continue
		}
		s := exampleServer(fmt.Sprintf("s%02d", i))
		s.Enabled = false // no process: this test is about the file and the set
		initial = append(initial, s)
	}
	rt := start(t, Options{}, initial...)
	api := newAPI(t, rt)

	stop := make(chan struct{})
	var readerErr error
	var reader sync.WaitGroup
	reader.Go(func() {
		for reads := 0; ; reads++ {
			select {
			case <-stop:
				if reads == 0 {
					readerErr = fmt.Errorf("the file was never read")
				}
				return
			default:
			}
			data, err := os.ReadFile(rt.configPath())
			if err == nil {
				_, err = config.Parse(data)
			}
			if err != nil {
				readerErr = fmt.Errorf("file unreadable or unparsable during the writes: %v", err)
				return
			}
		}
	})

	var wg sync.WaitGroup
	results := make([]string, n)
	for i := range n {
		name := fmt.Sprintf("s%02d", i)
		wg.Go(func() {
			check := func(method, path, body string, code int) {
				if a := serve(t, api.h, jsonRequest(method, path, body)); a.code != code {
					results[i] += fmt.Sprintf("%s %s: %d %s; ", method, path, a.code, a.body)
				}
			}
			switch i % 5 {
			case 0:
				check("POST", "/api/mcp/servers", exampleBody(t, name, map[string]any{"enabled": false}), 201)
			case 1:
				check("PATCH", "/api/mcp/servers/"+name, `{"timeout_seconds": 7}`, 200)
			case 2:
				check("DELETE", "/api/mcp/servers/"+name, "", 204)
			case 3:
				check("GET", "/api/mcp/servers/"+name, "", 200)
			case 4:
				check("POST", "/api/mcp/servers", exampleBody(t, name, map[string]any{"enabled": false}), 201)
				check("PATCH", "/api/mcp/servers/"+name, `{"env": {"ADDED": "v-0123456789"}}`, 200)
			}
		})
	}
	wg.Wait()
	close(stop)
	reader.Wait()
	for i, r := range results {
		if r != "" {
			t.Errorf("request %d: %s", i, r)
		}
	}
	if readerErr != nil {
		t.Fatal(readerErr)
	}

	f := wantConfigMode0600(t, rt)
	var kept, added []string
	for i := range n {
		name := fmt.Sprintf("s%02d", i)
		s, ok := f.Get(name)
		switch i % 5 {
		case 2:
			if ok {
				t.Errorf("%s deleted but still in the file", name)
			}
			continue
		case 0, 4:
			added = append(added, name)
		default:
			kept = append(kept, name)
		}
		switch {
		case !ok:
			t.Errorf("%s missing from the file", name)
		case i%5 == 1 && s.TimeoutSeconds != 7:
			t.Errorf("%s: PATCH of timeout lost: %v", name, s)
		case i%5 == 4 && s.Env["ADDED"] != "v-0123456789":
			t.Errorf("%s: PATCH after POST lost: %v", name, s)
		case i%5 != 1 && s.TimeoutSeconds != 0:
			t.Errorf("%s: timeout %d, touched by another request", name, s.TimeoutSeconds)
		}
	}
	var fileNames []string
	for _, s := range f.Servers {
		fileNames = append(fileNames, s.Name)
	}
	// Untouched entries keep their order and come first; the added ones
	// follow in the order their POSTs were served.
	if len(fileNames) != len(kept)+len(added) || !slices.Equal(fileNames[:len(kept)], kept) {
		t.Fatalf("file order %v, want %v then the added ones", fileNames, kept)
	}
	rest := slices.Clone(fileNames[len(kept):])
	slices.Sort(rest)
	if !slices.Equal(rest, added) {
		t.Fatalf("added in the file %v, want %v", rest, added)
	}
	// The runtime's set is the file's, in the same order.
	if got := api.names(); !slices.Equal(got, fileNames) {
		t.Fatalf("servers %v, file %v", got, fileNames)
	}
	if strings.Contains(rt.logs.String(), "v-0123456789") {
		t.Error("a secret reached the logs")
	}
}
