package runtime

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/internal/testutil"
)

// serveHTTPGateway serves a gateway server of rt over Streamable HTTP
// with opts until the test ends, answering it and its URL.
func serveHTTPGateway(t *testing.T, rt *testRuntime, opts MCPHTTPOptions) (*mcp.Server, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	srv, err := rt.MCPServer(ctx, MCPServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(MCPHandler(srv, opts))
	t.Cleanup(hs.Close)
	t.Cleanup(hs.CloseClientConnections)
	return srv, hs.URL + "/mcp"
}

// postInitialize POSTs a 2025-11-25 initialize to url with the given
// headers, answering the response's status and session ID.
func postInitialize(t *testing.T, url string, header map[string]string) (int, string) {
	t.Helper()
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	req, _ := http.NewRequest("POST", url, strings.NewReader(initialize))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id")
}

// The bearer scheme is case-insensitive; AllowedOrigins admits the
// origins it names and no other; MaxSessions bounds the sessions at once;
// an idle session ends after SessionTimeout.
func TestGatewayHTTPGuards(t *testing.T) {
	rt := start(t, Options{})
	const token = "gateway-guard-token"
	srv, url := serveHTTPGateway(t, rt, MCPHTTPOptions{Token: token, MaxSessions: 1, SessionTimeout: 200 * time.Millisecond,
		AllowedOrigins: []string{"https://app.example"}})

	for _, c := range []struct {
		what   string
		header map[string]string
		want   int
	}{
		{"a lower-case scheme, wrong token", map[string]string{"Authorization": "bearer " + token + "x"}, http.StatusUnauthorized},
		{"another scheme", map[string]string{"Authorization": "Basic " + token}, http.StatusUnauthorized},
		{"an origin not allowed", map[string]string{"Authorization": "Bearer " + token, "Origin": "https://evil.example"}, http.StatusForbidden},
	} {
		if got, _ := postInitialize(t, url, c.header); got != c.want {
			t.Errorf("%s: %d, want %d", c.what, got, c.want)
		}
	}
	status, id := postInitialize(t, url, map[string]string{"Authorization": "bEaReR " + token, "Origin": "https://app.example"})
	if status != http.StatusOK || id == "" {
		t.Fatalf("initialize with a mixed-case scheme from an allowed origin: %d, session %q; want 200 and a session", status, id)
	}
	if got, _ := postInitialize(t, url, map[string]string{"Authorization": "Bearer " + token}); got != http.StatusServiceUnavailable {
		t.Errorf("a second session with MaxSessions 1: %d, want 503", got)
	}
	// The first one, idle, ends; then there is room again.
	testutil.Eventually(t, 10*time.Second, "the idle session closed", func() bool { return sessionCount(srv) == 0 })
	if got, _ := postInitialize(t, url, map[string]string{"Authorization": "Bearer " + token}); got != http.StatusOK {
		t.Errorf("a session after the idle one ended: %d, want 200", got)
	}
}

// MaxSessions holds under concurrent initializes: of many at once with
// room for one, one gets a session and the others 503.
func TestGatewayHTTPMaxSessionsConcurrent(t *testing.T) {
	rt := start(t, Options{})
	srv, url := serveHTTPGateway(t, rt, MCPHTTPOptions{MaxSessions: 1})
	const n = 16
	statuses := make(chan int, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			<-start
			status, _ := postInitialize(t, url, nil)
			statuses <- status
		})
	}
	close(start)
	wg.Wait()
	close(statuses)
	ok := 0
	for s := range statuses {
		switch s {
		case http.StatusOK:
			ok++
		case http.StatusServiceUnavailable:
		default:
			t.Errorf("an initialize got %d, want 200 or 503", s)
		}
	}
	if ok != 1 || sessionCount(srv) != 1 {
		t.Errorf("%d of %d concurrent initializes got a session (%d sessions open), want 1 with MaxSessions 1", ok, n, sessionCount(srv))
	}
	for ss := range srv.Sessions() {
		_ = ss.Close()
	}
}

// Over Streamable HTTP a client negotiates 2025-11-25 at most (the SDK's
// stateful handler refuses 2026-07-28, even when asked for it), and a
// client that gives up its call sends notifications/cancelled, which
// cancels the upstream call.
func TestGatewayHTTPCancelNotification(t *testing.T) {
	rt := start(t, Options{}, exampleServer("ex"))
	rt.waitReady(t, "ex")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, url := serveHTTPGateway(t, rt, MCPHTTPOptions{})
	g, err := mcp.NewClient(&mcp.Implementation{Name: "gateway-test", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if got := g.InitializeResult().ProtocolVersion; got != "2025-11-25" {
		t.Fatalf("negotiated protocol %q over HTTP, want 2025-11-25", got)
	}
	testutil.Eventually(t, 30*time.Second, "ex__sleep listed", func() bool {
		res, err := g.ListTools(ctx, nil)
		return err == nil && slices.ContainsFunc(res.Tools, func(t *mcp.Tool) bool { return t.Name == "ex__sleep" })
	})
	cancelSleep(t, rt, g)
}
