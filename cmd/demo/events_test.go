package main

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/tmaxmax/go-sse"
)

// awaitState waits until demo run at base moves server name into state,
// or shows it there already: it opens the server's event stream
// (GET /api/mcp/events?server=name, read with go-sse's parser) before it
// reads the entry, so that a change between the two is not missed.
func awaitState(t *testing.T, base, name, state string, within time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/mcp/events?server="+name, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("opening %s's events: %v", name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("opening %s's events: %d", name, resp.StatusCode)
	}
	var entry struct{ State string }
	if r, err := http.Get(base + "/api/mcp/servers/" + name); err == nil {
		_ = json.NewDecoder(r.Body).Decode(&entry)
		r.Body.Close()
	}
	if entry.State == state {
		return
	}
	var seen []string
	for e, err := range sse.Read(resp.Body, nil) {
		if err != nil {
			t.Fatalf("no %s %s within %v: %v; saw %v", name, state, within, err, seen)
		}
		if e.Type != "state_changed" {
			continue
		}
		var change struct{ To string }
		if err := json.Unmarshal([]byte(e.Data), &change); err != nil {
			t.Fatalf("state_changed data %q: %v", e.Data, err)
		}
		if change.To == state {
			return
		}
		seen = append(seen, change.To)
	}
	t.Fatalf("%s's event stream ended before %s; saw %v", name, state, seen)
}
