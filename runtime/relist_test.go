package runtime

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/status"
)

// A listing after a list change that fails keeps the previous list and is
// tried again after the relist delay (on the runtime's clock), which
// registers the changed list.
func TestFailedListingRetried(t *testing.T) {
	srv, failList, clock, rt := startFailingLister(t)

	failList.Store(true)
	mcp.AddTool(srv, &mcp.Tool{Name: "b"}, noopTool) // announces the change
	waitTimers(t, clock, 1)                          // the listing failed: its retry is due
	rt.settle(t, "manager/mem")
	if names := toolNames(rt, "mem"); !slices.Contains(names, "mem__a") || slices.Contains(names, "mem__b") {
		t.Fatalf("after the failed listing: tools %v, want the previous list", names)
	}
	failList.Store(false)
	clock.Advance(time.Minute) // past the relist delay
	rt.awaitCatalog(t, "mem", "tool mem__b after the retry", func() bool { return slices.Contains(toolNames(rt, "mem"), "mem__b") })
	if st := mustStatus(t, rt, "mem"); st.State != status.Ready || st.Restarts != 0 {
		t.Errorf("a failed listing disturbed the server: %+v", st)
	}
}

// startFailingLister starts a runtime on the fake clock with one in-memory
// server "mem" (tool "a") whose tools/list fails while failList is set,
// and waits for it to be ready.
func startFailingLister(t *testing.T) (*mcp.Server, *atomic.Bool, *clockwork.FakeClock, *testRuntime) {
	t.Helper()
	failList := &atomic.Bool{}
	srv := mcp.NewServer(&mcp.Implementation{Name: "mem", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "a"}, noopTool)
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/list" && failList.Load() {
				return nil, errors.New("listing refused for the test")
			}
			return next(ctx, method, req)
		}
	})
	opts := Options{transport: func(config.Server) mcp.Transport {
		ct, st := mcp.NewInMemoryTransports()
		if _, err := srv.Connect(context.Background(), st, nil); err != nil {
			t.Error(err)
		}
		return ct
	}}
	clock := fakeClock(&opts)
	rt := start(t, opts, memServer("mem"))
	rt.waitReady(t, "mem")
	return srv, failList, clock, rt
}

// noopTool is a tool that answers an empty result.
func noopTool(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
	return &mcp.CallToolResult{}, nil, nil
}
