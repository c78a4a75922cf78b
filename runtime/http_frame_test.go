package runtime

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/status"
)

// TestHTTPStdioFrameTooLarge: a stdio server answering a call with a frame
// over the SDK's 16 MiB limit gets 502 and an error that says so (not a
// 500), and the server comes back by the usual backoff: ready again, on a
// new process, and a normal call works.
func TestHTTPStdioFrameTooLarge(t *testing.T) {
	rt := start(t, Options{}, exampleServer("ex", "-fault-tools"))
	api := newAPI(t, rt)
	pid := api.waitState("ex", status.Ready).PID
	sub := rt.subscribe(t, "ex")

	body := fmt.Sprintf(`{"arguments": {"bytes": %d}}`, mcp.DefaultMaxLineLength+1)
	e := api.do("POST", "/api/mcp/tools/ex__huge/call", body).want(t, http.StatusBadGateway).apiError(t)
	if !strings.Contains(e.Error, "exceeded the 16 MiB frame limit") {
		t.Errorf("error %q does not say the answer exceeded the 16 MiB frame limit", e.Error)
	}

	// Ready again on a new process (the old one may still show as ready
	// for a moment, before the loss is noticed).
	started := testutil.Await(t, sub, 30*time.Second, "ex on a new process", func(e events.SessionStarted) bool { return e.PID != pid })
	d := api.waitState("ex", status.Ready)
	if d.PID != started.PID || d.ToolCount == 0 {
		t.Errorf("ex = %+v, want ready on pid %d with its tools", d.ServerEntry, started.PID)
	}
	if d.PID == pid || d.Restarts < 1 || !strings.Contains(d.LastError, "16 MiB") {
		t.Errorf("ex = %+v, want restarted with the frame error as last_error", d.ServerEntry)
	}
	var res callResult
	api.do("POST", "/api/mcp/tools/ex__echo/call", `{"arguments": {"text": "back"}}`).want(t, http.StatusOK).decode(t, &res)
	if len(res.Content) != 1 || res.Content[0].Text == nil || *res.Content[0].Text != "back" {
		t.Fatalf("echo after recovery = %+v", res)
	}
}
