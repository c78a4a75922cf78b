package mcpconn

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/config"
)

// bigRead is the size of each big:// resource.
const bigRead = 512 << 10

// readServer is an in-memory 2026-07-28 server with a template
// big://{id} of bigRead bytes of text per URI, and ttl://a, answered with a ttlMs
// of an hour, and pages of resources for any cursor; reads counts the reads of ttl://a it answered.
func readServer(t *testing.T, reads *atomic.Int32) *Conn {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "reads"}, &mcp.ServerOptions{SupportedProtocolVersions: []string{cachingProtocol}})
	srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "big://{id}", Name: "big"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: strings.Repeat("x", bigRead)}}}, nil
		})
	srv.AddResource(&mcp.Resource{URI: "ttl://a", Name: "a"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		n := reads.Add(1)
		res := &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "ttl://a", Text: fmt.Sprint("read ", n)}}}
		res.TTLMs = 3600_000
		return res, nil
	})
	// Any cursor is a page of one resource with a bigRead description.
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if list, ok := req.(*mcp.ListResourcesRequest); ok && list.Params.Cursor != "" {
				uri := "page://" + list.Params.Cursor
				return &mcp.ListResourcesResult{Resources: []*mcp.Resource{{URI: uri, Name: "p", Description: strings.Repeat("d", bigRead)}}}, nil
			}
			return next(ctx, method, req)
		}
	})
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatalf("server connect: %v", err)
	}
	t.Cleanup(func() { ss.Close() })
	conn, err := testDial(t.Context(), Options{
		Server:    config.Server{Name: "s", Type: config.TypeLocal, Command: []string{"unused"}, Enabled: true},
		Transport: ct,
	})
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(conn.Close)
	if v := conn.ProtocolVersion(); v != cachingProtocol {
		t.Fatalf("protocol %q, want %q", v, cachingProtocol)
	}
	return conn
}

// heap is the live heap after a collection.
func heap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestReadCacheHoldsNoUncacheableResult: on 2026-07-28, reading 50
// distinct URIs of 512 KiB each leaves the SDK's read cache holding next
// to nothing once the caller dropped the results (without uncached it
// held all 25 MiB), and so does listing 50 pages of resources by cursor;
// a result with a ttlMs is still served from the cache, whole.
func TestReadCacheHoldsNoUncacheableResult(t *testing.T) {
	var reads atomic.Int32
	conn := readServer(t, &reads)
	before := heap()
	for i := range 50 {
		res, err := conn.ReadResource(t.Context(), fmt.Sprintf("big://%d", i))
		if err != nil || len(res.Contents) != 1 || len(res.Contents[0].Text) != bigRead {
			t.Fatalf("read %d: %v", i, err)
		}
	}
	if after := heap(); after > before+bigRead*50/4 {
		t.Errorf("heap grew by %d MiB over 50 reads of 512 KiB that nobody holds", (after-before)>>20)
	}
	before = heap()
	for i := range 50 {
		res, _, err := conn.ListResources(t.Context(), fmt.Sprint(i))
		if err != nil || len(res.Resources) != 1 || len(res.Resources[0].Description) != bigRead {
			t.Fatalf("page %d: %v", i, err)
		}
	}
	if after := heap(); after > before+bigRead*50/4 {
		t.Errorf("heap grew by %d MiB over 50 pages of 512 KiB that nobody holds", (after-before)>>20)
	}

	// Concurrent reads of one URI: each empties only its own result (the
	// race detector would see one emptying another's).
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if res, err := conn.ReadResource(t.Context(), "big://same"); err != nil || len(res.Contents) != 1 || len(res.Contents[0].Text) != bigRead {
				t.Errorf("concurrent read: %v", err)
			}
		})
	}
	wg.Wait()

	for i := range 2 {
		res, err := conn.ReadResource(t.Context(), "ttl://a")
		if err != nil || len(res.Contents) != 1 || res.Contents[0].Text != "read 1" {
			t.Fatalf("read %d of ttl://a = %+v, %v; want the first answer, whole", i, res, err)
		}
	}
	if n := reads.Load(); n != 1 {
		t.Errorf("the server answered %d reads of ttl://a, want 1 (the second from the SDK's cache)", n)
	}
}
