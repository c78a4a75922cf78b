package runtime

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/status"
)

// holdServer is an in-memory server with one tool, "hold", that counts the
// calls in it and returns when open is closed (a barrier the test or the
// tool itself opens) or when the test releases it one call at a time.
type holdServer struct {
	server  *mcp.Server
	entered chan struct{}
	release chan struct{}
	stop    chan struct{}

	mu       sync.Mutex
	inFlight int
	peak     int
	barrier  int           // calls that open the barrier; 0: none
	open     chan struct{} // closed when barrier calls are in at once
}

func newHoldServer(t *testing.T) *holdServer {
	h := &holdServer{
		server:  mcp.NewServer(&mcp.Implementation{Name: "hold", Version: "1"}, nil),
		entered: make(chan struct{}, 64),
		release: make(chan struct{}),
		stop:    make(chan struct{}),
		open:    make(chan struct{}),
	}
	mcp.AddTool(h.server, &mcp.Tool{Name: "hold"}, h.hold)
	t.Cleanup(func() { close(h.stop) }) // runs before the runtime's Shutdown
	return h
}

// expect resets the counters and arms a barrier of n calls (0: none);
// the calls before must be done.
func (h *holdServer) expect(n int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.peak, h.barrier, h.open = 0, n, make(chan struct{})
	for len(h.entered) > 0 {
		<-h.entered
	}
}

func (h *holdServer) peakInFlight() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.peak
}

func (h *holdServer) hold(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
	h.mu.Lock()
	h.inFlight++
	h.peak = max(h.peak, h.inFlight)
	open := h.open
	if h.inFlight == h.barrier {
		close(h.open)
	}
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		h.inFlight--
		h.mu.Unlock()
	}()
	h.entered <- struct{}{}
	select {
	case <-open:
	case <-h.release:
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	case <-h.stop:
		return nil, nil, errors.New("test over")
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
}

func (h *holdServer) options(t *testing.T) Options {
	return Options{transport: func(config.Server) mcp.Transport {
		ct, st := mcp.NewInMemoryTransports()
		if _, err := h.server.Connect(context.Background(), st, nil); err != nil {
			t.Error(err)
		}
		return ct
	}}
}

// Tool calls through the runtime run concurrently on the server's one
// session, and max_concurrent_calls, set by a PATCH, bounds them.
func TestRuntimeCallsRunConcurrently(t *testing.T) {
	h := newHoldServer(t)
	rt := start(t, h.options(t), memServer("c"))
	rt.waitState(t, "c", status.Ready)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	// Unlimited: 8 calls that return only once all 8 are in the tool.
	h.expect(8)
	run := func(n int) <-chan error {
		errs := make(chan error, n)
		for range n {
			go func() {
				_, err := rt.CallTool(ctx, "c__hold", nil)
				errs <- err
			}()
		}
		return errs
	}
	errs := run(8)
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatalf("unlimited: %v", err)
		}
	}
	if p := h.peakInFlight(); p != 8 {
		t.Fatalf("unlimited: peak in flight %d, want 8", p)
	}

	// Single-flight: the calls are let out one at a time.
	e, err := rt.PatchServer(ctx, "c", []byte(`{"max_concurrent_calls": 1}`))
	if err != nil || e.MaxConcurrentCalls != 1 {
		t.Fatalf("PatchServer: %+v, %v", e, err)
	}
	rt.waitState(t, "c", status.Ready)
	if d, _ := rt.Server("c"); d.MaxConcurrentCalls != 1 {
		t.Fatalf("Server shows max_concurrent_calls %d, want 1", d.MaxConcurrentCalls)
	}
	h.expect(0)
	const calls = 4
	errs = run(calls)
	for range calls {
		select {
		case <-h.entered:
		case <-ctx.Done():
			t.Fatal("a call never reached the server")
		}
		select {
		case h.release <- struct{}{}:
		case <-ctx.Done():
			t.Fatal("no call took the release")
		}
	}
	for range calls {
		if err := <-errs; err != nil {
			t.Fatalf("single-flight: %v", err)
		}
	}
	if p := h.peakInFlight(); p != 1 {
		t.Fatalf("single-flight: peak in flight %d, want 1", p)
	}
}
