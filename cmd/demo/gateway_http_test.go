package main

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/internal/testutil"
)

// TestGatewayHTTPTimeouts: the gateway's HTTP server cuts off a client
// that trickles its request body (ReadTimeout, 500 ms here), while a tool
// call that outlasts the read timeout still gets its answer and the
// client's long-lived stream (older than the Read and Idle timeouts by
// then) still carries a tools/list_changed.
func TestGatewayHTTPTimeouts(t *testing.T) {
	rt, logger, logs := startEx(t)
	l, err := listenMCP("127.0.0.1:0", "")
	if err != nil {
		t.Fatal(err)
	}
	l.timeouts = testTimeouts
	stop, err := l.serve(rt, logger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	addr := l.ln.Addr().String()

	body := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("b", 40) + `"}}`
	head := "POST /mcp HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n" +
		"Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n"
	if answer, elapsed := trickle(t, addr, head, body); strings.Contains(answer, " 200 ") || elapsed > 2*time.Second {
		t.Errorf("slow body: answer %q after %v, want the request cut off near ReadTimeout (500ms)", answer, elapsed)
	}

	g := connectClient(t, &mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp"})
	defer g.Close()
	g.awaitTool(t, "ex__sleep", logs)
	res, err := g.CallTool(context.Background(), &mcp.CallToolParams{Name: "ex__sleep", Arguments: map[string]any{"ms": 1500}})
	if err != nil || res.IsError {
		t.Fatalf("a 1.5 s call behind a 500 ms read timeout: %+v, %v", res, err)
	}
	select {
	case <-g.changed: // drain what the first listing may have left
	default:
	}
	ex2 := config.Server{Name: "ex2", Type: config.TypeLocal, Enabled: true, Command: []string{demoBin, "serve"},
		Env: map[string]string{testutil.MarkerEnv: marker}}
	if _, err := rt.AddServer(context.Background(), ex2); err != nil {
		t.Fatal(err)
	}
	select {
	case <-g.changed:
	case <-time.After(30 * time.Second):
		t.Fatalf("no tools/list_changed after adding ex2: the client's stream is gone\n%s", logs.String())
	}
	g.awaitTool(t, "ex2__echo", logs)
}
