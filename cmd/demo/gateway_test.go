package main

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/internal/testutil"
)

// gatewayDir is a state dir with one example server, ex, with its
// progress tools.
func gatewayDir(t *testing.T) string {
	dir := t.TempDir()
	testutil.WriteConfig(t, dir, config.Server{Name: "ex", Type: config.TypeLocal, Command: []string{demoBin, "serve", "-progress-tools"},
		Env: map[string]string{testutil.MarkerEnv: marker}, Enabled: true})
	return dir
}

// gatewaySession is a go-sdk client of a gateway, with the progress
// reports and tools/list_changed it got.
type gatewaySession struct {
	*mcp.ClientSession
	changed  chan struct{}
	mu       sync.Mutex
	progress []*mcp.ProgressNotificationParams
}

func connectClient(t *testing.T, transport mcp.Transport) *gatewaySession {
	t.Helper()
	g := &gatewaySession{changed: make(chan struct{}, 1)}
	client := mcp.NewClient(&mcp.Implementation{Name: "demo-gateway-test", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case g.changed <- struct{}{}:
			default:
			}
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			g.mu.Lock()
			g.progress = append(g.progress, req.Params)
			g.mu.Unlock()
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, transport, nil)
	if err != nil {
		t.Fatalf("connecting to the gateway: %v", err)
	}
	g.ClientSession = cs
	return g
}

// awaitTool waits (on tools/list_changed) until the gateway lists name.
func (g *gatewaySession) awaitTool(t *testing.T, name string, logs *lockedBuffer) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		res, err := g.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatalf("ListTools: %v", err)
		}
		if slices.ContainsFunc(res.Tools, func(tool *mcp.Tool) bool { return tool.Name == name }) {
			return
		}
		select {
		case <-g.changed:
		case <-deadline:
			t.Fatalf("the gateway never listed %s\n%s", name, logs.String())
		}
	}
}

// exercise calls through the gateway: echo, progress under the client's
// token, and a cancelled sleep that the example server sees cancelled.
func (g *gatewaySession) exercise(t *testing.T, logs *lockedBuffer) {
	t.Helper()
	g.awaitTool(t, "ex__echo", logs)
	res, err := g.CallTool(context.Background(), &mcp.CallToolParams{Name: "ex__echo", Arguments: map[string]any{"text": "through the gateway"}})
	if err != nil || res.IsError || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != "through the gateway" {
		t.Fatalf("echo through the gateway: %+v, %v", res, err)
	}
	params := &mcp.CallToolParams{Name: "ex__progress", Arguments: map[string]any{"period_ms": 5, "total_ms": 150}}
	params.SetProgressToken("tok-7")
	if _, err := g.CallTool(context.Background(), params); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, "progress under the client's token", func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		return len(g.progress) > 0 && g.progress[0].ProgressToken == "tok-7"
	})

	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := g.CallTool(ctx, &mcp.CallToolParams{Name: "ex__sleep", Arguments: map[string]any{"ms": 600000}})
		errc <- err
	}()
	testutil.Eventually(t, 10*time.Second, "the sleep in flight", func() bool { return strings.Contains(logs.String(), "sleeping 600000ms") })
	cancel()
	if err := <-errc; err == nil {
		t.Error("a cancelled call succeeded")
	}
	testutil.Eventually(t, 10*time.Second, "the server's sleep cancelled", func() bool {
		return strings.Contains(logs.String(), "sleep of 600000ms cancelled")
	})
}

// demo gateway serves the registry on stdio: stdout carries only the
// protocol, and it exits cleanly, leaving no process, when stdin ends.
func TestGatewayStdio(t *testing.T) {
	cmd := demoCommand("gateway", "-state-dir", gatewayDir(t), "-v")
	logs := &lockedBuffer{}
	cmd.Stderr = logs
	g := connectClient(t, &mcp.CommandTransport{Command: cmd})
	g.exercise(t, logs)
	// Close closes stdin and waits for the process.
	if err := g.Close(); err != nil {
		t.Errorf("closing the session: %v\n%s", err, logs.String())
	}
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 0 {
		t.Errorf("demo gateway after stdin closed: %v\n%s", cmd.ProcessState, logs.String())
	}
	if left := testutil.ProcessesWithMarker(marker); len(left) > 0 {
		t.Errorf("processes left: %v", left)
	}
}

// SIGTERM stops demo gateway cleanly while a client is connected.
func TestGatewayStdioSIGTERM(t *testing.T) {
	cmd := demoCommand("gateway", "-state-dir", gatewayDir(t))
	logs := &lockedBuffer{}
	cmd.Stderr = logs
	g := connectClient(t, &mcp.CommandTransport{Command: cmd})
	g.awaitTool(t, "ex__echo", logs)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- g.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("demo gateway still running 30s after SIGTERM\n%s", logs.String())
	}
	_ = g.Close()
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 0 {
		t.Errorf("demo gateway after SIGTERM: %v\n%s", cmd.ProcessState, logs.String())
	}
	if left := testutil.ProcessesWithMarker(marker); len(left) > 0 {
		t.Errorf("processes left: %v", left)
	}
}

// bearer adds a token to every request.
type bearer string

func (b bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(req)
}

var gatewayURL = regexp.MustCompile(`url=(http://127\.0\.0\.1:\d+/mcp)`)

// demo run -mcp-listen serves the gateway over Streamable HTTP at /mcp,
// with the token of -mcp-token-file.
func TestRunServesGatewayOverHTTP(t *testing.T) {
	token := "a-token-of-the-test-0123456789"
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd, _, logs := startRun(t, gatewayDir(t), "-mcp-listen", "127.0.0.1:0", "-mcp-token-file", tokenFile)
	var url string
	testutil.Eventually(t, 30*time.Second, "the gateway's URL in the log", func() bool {
		m := gatewayURL.FindStringSubmatch(logs.String())
		if m != nil {
			url = m[1]
		}
		return m != nil
	})
	resp, err := http.Post(url, "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("POST without the token: %d, want 401", resp.StatusCode)
	}
	g := connectClient(t, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer(token)}})
	g.exercise(t, logs)
	if err := g.Close(); err != nil {
		t.Errorf("closing: %v", err)
	}
	if strings.Contains(logs.String(), token) {
		t.Errorf("the token is in the log")
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	if err := waitBounded(cmd, 30*time.Second); err != nil {
		t.Fatalf("demo run after SIGTERM: %v\n%s", err, logs.String())
	}
	if left := testutil.ProcessesWithMarker(marker); len(left) > 0 {
		t.Errorf("processes left: %v", left)
	}
}

// Off loopback, -mcp-listen refuses to start without a token file.
func TestRunGatewayOffLoopbackNeedsToken(t *testing.T) {
	out, err := demoCommand("run", "-state-dir", t.TempDir(), "-listen", "127.0.0.1:0", "-mcp-listen", "0.0.0.0:0").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "not a loopback address: set -mcp-token-file") {
		t.Fatalf("demo run -mcp-listen 0.0.0.0:0 without a token: %v\n%s", err, out)
	}
}
