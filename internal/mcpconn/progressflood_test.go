package mcpconn

import (
	"context"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/internal/redact"
	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/tools"
)

// A server floods progress as fast as it can, each report with a 5 KiB
// message that starts with a secret, while the host's callback takes 5 ms
// a report. Then it pauses, and the live heap is measured while nothing
// flows (a collection during the flood counts what the flood allocates
// during the mark, megabytes of noise): it is back near where it was,
// because handling a report never waits for the host, so the SDK's
// unbounded queue of notifications does not grow, and the host's reports
// are not queued but coalesced. (Handing each report to the host on the
// SDK's goroutine, as before, held every report the host had not got:
// 5 MiB here under the race detector, 40 MiB without.) Then the server sends one last report and answers:
// the host gets that report, every message it got was scrubbed and cut,
// and no goroutine is left once the Conn is closed.
func TestProgressFloodSlowCallback(t *testing.T) {
	// First in, so last out: after the server's session closed.
	before := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, before) })
	const (
		flood  = 1500 * time.Millisecond
		secret = "FLOOD-SECRET-0451"
		bound  = 1 << 20
	)
	message := secret + strings.Repeat("x", 5<<10)
	var sent atomic.Int64
	paused, resume := make(chan struct{}), make(chan struct{})
	server := mcp.NewServer(&mcp.Implementation{Name: "flood"}, nil)
	type noArgs struct{}
	mcp.AddTool(server, &mcp.Tool{Name: "flood"}, func(ctx context.Context, req *mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, any, error) {
		tok := req.Params.GetProgressToken()
		report := func() error {
			return req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(sent.Add(1)), Message: message})
		}
		for end := time.Now().Add(flood); time.Now().Before(end); {
			if err := report(); err != nil {
				return nil, nil, err
			}
		}
		close(paused)
		select {
		case <-resume:
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
		if err := report(); err != nil {
			return nil, nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil, nil
	})
	ct := serveInMemory(t, server)
	srv := config.Server{Name: "flood", Type: config.TypeLocal, Command: []string{"x"}, Enabled: true, TimeoutSeconds: 20, Env: map[string]string{"TOKEN": secret}}
	c, err := testDial(context.Background(), Options{Server: srv, Transport: ct})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var got, last atomic.Int64
	var bad atomic.Pointer[string]
	ctx := tools.WithProgress(context.Background(), func(p tools.Progress) {
		got.Add(1)
		last.Store(int64(p.Progress))
		if strings.Contains(p.Message, secret) || len(p.Message) > maxLineBytes+len(redact.Truncated) || !strings.HasSuffix(p.Message, redact.Truncated) {
			bad.Store(&p.Message)
		}
		<-time.After(5 * time.Millisecond) // a slow host
	})
	live := liveHeap()
	answered := make(chan error, 1)
	go func() {
		_, err := c.CallTool(ctx, "flood", map[string]any{})
		answered <- err
	}()
	select {
	case <-paused:
	case err := <-answered:
		t.Fatalf("the flood ended early: %v", err)
	}
	grew := int64(liveHeap()) - int64(live)
	close(resume)
	if err := <-answered; err != nil {
		t.Fatal(err)
	}
	t.Logf("%d reports sent, %d reached the host; the live heap grew by %d KiB", sent.Load(), got.Load(), grew>>10)
	if grew > bound {
		t.Errorf("a progress flood grew the live heap by %d KiB, want it bounded (≤ %d KiB)", grew>>10, bound>>10)
	}
	// The last report reaches the host before CallTool returns, or, if
	// the SDK handled it just after the result, within progressGrace.
	testutil.Eventually(t, 5*time.Second, "the last report to reach the host", func() bool { return last.Load() == sent.Load() })
	if m := bad.Load(); m != nil {
		t.Errorf("the host got a message of %d bytes (secret in it: %v), want it scrubbed and cut to %d bytes with %q",
			len(*m), strings.Contains(*m, secret), maxLineBytes, redact.Truncated)
	}
	c.Close()
	if n := c.progress.size(); n != 0 {
		t.Errorf("the router holds %d calls after Close", n)
	}
}

// liveHeap is the heap that survives a collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
