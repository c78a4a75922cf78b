package runtime

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/internal/testutil"
)

// A client that stops reading does not hold up the others' log lines:
// each session has its own bounded queue and sender.
func TestGatewayLogsStuckClient(t *testing.T) {
	rt := start(t, Options{}, exampleServer("ex"))
	rt.waitReady(t, "ex")
	m, good := serveGateway(t, rt, MCPServerOptions{})
	good.awaitTool(t, "ex__stderr")

	release := make(chan struct{})
	var releaseOnce sync.Once
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) })
	ct, st := mcp.NewInMemoryTransports()
	ss, err := m.srv.Connect(t.Context(), stuckTransport{st, release}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	stuck, err := mcp.NewClient(&mcp.Implementation{Name: "stuck", Version: "1"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }); _ = stuck.Close() })
	for _, c := range []*mcp.ClientSession{stuck, good.ClientSession} {
		if err := c.SetLoggingLevel(t.Context(), &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
			t.Fatal(err)
		}
	}
	const lines = 20
	for i := range lines {
		mustCall(t, rt, "ex__stderr", map[string]any{"text": fmt.Sprintf("stuck-test-line-%d", i)})
	}
	testutil.Eventually(t, 10*time.Second, "every line at the reading client", func() bool {
		good.mu.Lock()
		defer good.mu.Unlock()
		for _, l := range good.logs {
			if s, _ := l.Data.(string); strings.Contains(s, fmt.Sprintf("stuck-test-line-%d", lines-1)) {
				return true
			}
		}
		return false
	})
}

// stuckTransport is a server transport whose log notifications do not go
// out until release is closed (or their context ends): a client that
// stopped reading.
type stuckTransport struct {
	mcp.Transport
	release chan struct{}
}

func (s stuckTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := s.Transport.Connect(ctx)
	return stuckConn{c, s.release}, err
}

type stuckConn struct {
	mcp.Connection
	release chan struct{}
}

func (c stuckConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if r, ok := msg.(*jsonrpc.Request); ok && r.Method == "notifications/message" {
		select {
		case <-c.release:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return c.Connection.Write(ctx, msg)
}
