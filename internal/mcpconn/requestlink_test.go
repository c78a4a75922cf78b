package mcpconn

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/internal/exampleserver"
	"github.com/openprogram/mcpvisor/internal/testutil"
)

// Calls over Streamable HTTP reuse the session's connection: a call's end
// does not cancel its HTTP request while the SDK still reads the end of
// the answer's stream, which would drop the connection (before, about one
// call in ten dialled a new one). Sequential calls need no new connection
// after the first few (the POSTs and the GET stream of the session).
func TestHTTPCallsReuseTheConnection(t *testing.T) {
	server := exampleserver.NewServer(exampleserver.Options{Stderr: discard{}})
	ts := httptest.NewUnstartedServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	var dialled atomic.Int64
	ts.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			dialled.Add(1)
		}
	}
	ts.Start()
	t.Cleanup(ts.Close)
	var work sync.WaitGroup
	c, err := testDial(context.Background(), Options{Server: config.Server{Name: "h", Type: config.TypeHTTP, URL: ts.URL, Enabled: true}, Go: work.Go})
	if err != nil {
		t.Fatal(err)
	}
	defer work.Wait()
	defer c.Close()
	call := func() {
		t.Helper()
		if _, err := c.CallTool(t.Context(), "echo", map[string]any{"text": "again"}); err != nil {
			t.Fatal(err)
		}
	}
	for range 5 { // the session's connections are open
		call()
	}
	before := dialled.Load()
	for range 100 {
		call()
	}
	if n := dialled.Load() - before; n > 1 {
		t.Fatalf("100 calls dialled %d new connections, want at most 1", n)
	}
}

// A request whose call is over keeps its context until released; one
// whose caller gave up, or whose session was cut, loses it at once, and
// none is linked after the cut.
func TestRequestLink(t *testing.T) {
	t.Run("over", func(t *testing.T) {
		parent, end := context.WithCancelCause(context.Background())
		t0, _ := newCutTransport(http.DefaultTransport)
		ctx, l := linkRequest(parent, t0.(*cutTransport))
		end(errRequestOver)
		testutil.Eventually(t, wait, "the grace timer", func() bool {
			l.mu.Lock()
			defer l.mu.Unlock()
			return l.grace != nil
		})
		if ctx.Err() != nil {
			t.Fatal("an answered request was cancelled before its grace")
		}
		l.release()
		if ctx.Err() == nil {
			t.Fatal("release left the request's context running")
		}
	})
	t.Run("caller gave up", func(t *testing.T) {
		parent, end := context.WithCancelCause(context.Background())
		t0, _ := newCutTransport(http.DefaultTransport)
		ctx, l := linkRequest(parent, t0.(*cutTransport))
		defer l.release()
		end(errors.New("caller gone"))
		<-ctx.Done()
	})
	t.Run("cut", func(t *testing.T) {
		t0, cutNow := newCutTransport(http.DefaultTransport)
		ctx, l := linkRequest(context.Background(), t0.(*cutTransport))
		defer l.release()
		cutNow()
		<-ctx.Done()
		if ctx, l := linkRequest(context.Background(), t0.(*cutTransport)); ctx != nil || l != nil {
			t.Fatal("a request was linked after the cut")
		}
	})
}
