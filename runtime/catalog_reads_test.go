package runtime

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/internal/testutil"
)

// Catalog reads run one at a time: while one holds the read slot, four
// concurrent GETs of the catalog all wait for it and none answers; once
// it is free they all answer, each with the home's servers.
func TestCatalogReadsSerialised(t *testing.T) {
	rt, _ := startCatalog(t)
	h := rt.Handler()
	rt.catalogReads <- struct{}{} // a read in progress
	type answer struct {
		code int
		body string
	}
	answers := make(chan answer, 4)
	for range 4 {
		go func() {
			req := httptest.NewRequest(http.MethodGet, "/api/mcp/catalog", nil)
			req.Host = "127.0.0.1:7077"
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			answers <- answer{rec.Code, rec.Body.String()}
		}()
	}
	testutil.Eventually(t, 10*time.Second, "four catalog reads waiting", func() bool { return rt.catalogQueued.Load() == 4 })
	select {
	case a := <-answers:
		t.Fatalf("a GET answered %d while another read held the slot", a.code)
	default:
	}
	<-rt.catalogReads
	for range 4 {
		a := <-answers
		if a.code != http.StatusOK || !strings.Contains(a.body, `"name":"alpha"`) {
			t.Errorf("GET /api/mcp/catalog: %d %.200s", a.code, a.body)
		}
		wantNoCatalogSecret(t, rt, a.body)
	}
	if n, held := rt.catalogQueued.Load(), len(rt.catalogReads); n != 0 || held != 0 {
		t.Errorf("after the reads: %d waiting, slot held %d", n, held)
	}
}

// A read waiting for the slot gives up when its context ends, without
// taking the slot: the next read runs.
func TestCatalogReadWaitEndsWithContext(t *testing.T) {
	rt, _ := startCatalog(t)
	rt.catalogReads <- struct{}{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := rt.Catalog(ctx)
		done <- err
	}()
	testutil.Eventually(t, 10*time.Second, "a catalog read waiting", func() bool { return rt.catalogQueued.Load() == 1 })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("the waiting read: %v, want canceled", err)
	}
	<-rt.catalogReads
	if list, err := rt.Catalog(context.Background()); err != nil || len(list.Entries) == 0 {
		t.Errorf("the next read: %d entries, %v", len(list.Entries), err)
	}
}
