package mcpconn

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/tools"
)

// TestFrameTooLarge: a stdio answer over the SDK's frame limit fails the
// call, and every other call in flight, with tools.ErrResponseTooLarge and
// a message naming the limit, and ends the session with the same cause. An
// answer just under the limit still arrives.
func TestFrameTooLarge(t *testing.T) {
	c, err := testDial(context.Background(), Options{Server: server(demoBin, "serve", "-fault-tools"), Grace: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		c.Close()
		assertNoProcesses(t)
	}()
	res, err := c.CallTool(context.Background(), "huge", map[string]any{"bytes": mcp.DefaultMaxLineLength - 1024})
	if err != nil || len(res.Content) != 1 {
		t.Fatalf("an answer under the limit: %v, %v", res, err)
	}

	var wg sync.WaitGroup
	var slowErr error
	wg.Go(func() { _, slowErr = c.CallTool(context.Background(), "sleep", map[string]any{"ms": 20000}) })
	_, err = c.CallTool(context.Background(), "huge", map[string]any{"bytes": mcp.DefaultMaxLineLength + 1})
	wg.Wait()
	for what, err := range map[string]error{"the call": err, "a call in flight": slowErr} {
		if !errors.Is(err, tools.ErrResponseTooLarge) || !strings.Contains(err.Error(), "exceeded the 16 MiB frame limit") {
			t.Errorf("%s: %v, want ErrResponseTooLarge naming the 16 MiB limit", what, err)
		}
	}
	select {
	case <-c.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the session did not end after the oversized frame")
	}
	if !errors.Is(c.Err(), tools.ErrResponseTooLarge) {
		t.Errorf("session ended with %v, want ErrResponseTooLarge", c.Err())
	}
}
