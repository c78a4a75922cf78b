package exampleserver

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/openprogram/mcpvisor/internal/testutil"
)

// testTimeout bounds every wait in the tests, so a hang fails instead of
// stalling the run. It is generous: the assertions are about outcomes.
const testTimeout = 10 * time.Second

// newClient returns a client for the tests.
func newClient() *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "exampleserver-test", Version: "0"}, nil)
}

// connectInMemory connects a client to NewServer(opts) over in-memory
// transports and closes both ends when the test ends.
func connectInMemory(t *testing.T, opts Options) *mcp.ClientSession {
	t.Helper()
	return connectServer(t, NewServer(opts))
}

// connectServer connects a client to srv over in-memory transports and
// closes both ends when the test ends.
func connectServer(t *testing.T, srv *mcp.Server) *mcp.ClientSession {
	t.Helper()
	return connectClient(t, srv, newClient())
}

// connectClient is connectServer with a client of the test's own.
func connectClient(t *testing.T, srv *mcp.Server, client *mcp.Client) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	serverT, clientT := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, serverT, nil)
	if err != nil {
		t.Fatalf("server Connect: %v", err)
	}
	cs, err := client.Connect(ctx, clientT, nil)
	if err != nil {
		ss.Close()
		t.Fatalf("client Connect: %v", err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}

// callTool calls a tool with a bounded context and fails the test on a
// protocol error.
func callTool(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	return callToolWithin(t, cs, testTimeout, name, args)
}

// callToolWithin is callTool with its own deadline, for a call whose
// answer is megabytes: encoding and decoding it under -race on a loaded
// 2-core machine has taken longer than testTimeout.
func callToolWithin(t *testing.T, cs *mcp.ClientSession, within time.Duration, name string, args any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("CallTool(%s): %v", name, err)
	}
	return res
}

// onlyText returns the text of a result that must hold exactly one text
// block.
func onlyText(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("got %d content blocks, want 1: %+v", len(res.Content), res.Content)
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("got content %T, want *mcp.TextContent", res.Content[0])
	}
	return tc.Text
}

// runHarness runs Run on in-memory pipes, as a process would on stdio.
type runHarness struct {
	transport *mcp.IOTransport // the client's side of the pipes
	done      chan error       // receives Run's result
}

// startRun starts Run(ctx, opts, ...) in a goroutine.
func startRun(ctx context.Context, opts Options) *runHarness {
	serverIn, clientOut := io.Pipe()
	clientIn, serverOut := io.Pipe()
	h := &runHarness{
		transport: &mcp.IOTransport{Reader: clientIn, Writer: clientOut},
		done:      make(chan error, 1),
	}
	go func() { h.done <- Run(ctx, opts, serverIn, serverOut) }()
	return h
}

// wait returns Run's result, failing the test if Run does not return.
func (h *runHarness) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-h.done:
		return err
	case <-time.After(testTimeout):
		t.Fatal("Run did not return")
		return nil
	}
}

// waitForLine waits until buf holds line as a whole line.
func waitForLine(t *testing.T, buf *syncBuffer, line string) {
	t.Helper()
	if !testutil.Within(testTimeout, func() bool { return hasLine(buf.String(), line) }) {
		t.Fatalf("line %q never appeared; got %q", line, buf.String())
	}
}

// hasLine reports whether text holds line as a whole line.
func hasLine(text, line string) bool {
	for l := range strings.Lines(text) {
		if strings.TrimRight(l, "\r\n") == line {
			return true
		}
	}
	return false
}

// sleepParams calls the sleep tool for ms milliseconds.
func sleepParams(ms int64) *mcp.CallToolParams {
	return &mcp.CallToolParams{Name: "sleep", Arguments: map[string]any{"ms": ms}}
}

// syncBuffer collects what a server and a test write and read at once.
type syncBuffer = testutil.Buffer
