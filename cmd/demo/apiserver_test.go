package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/runtime"
	"github.com/openprogram/mcpvisor/status"
)

// testTimeouts are small enough to see a slow client cut off quickly; the
// route deadline of reads and quick writes is the 500 ms Write here.
var testTimeouts = apiTimeouts{ReadHeader: 300 * time.Millisecond, Read: 500 * time.Millisecond,
	Write: 500 * time.Millisecond, Idle: time.Second}

// serveTestAPI runs a runtime with the example server (timeout_seconds 5)
// behind newAPIServer with testTimeouts on a loopback port, stopped when
// the test ends, and returns its address.
func serveTestAPI(t *testing.T) string {
	t.Helper()
	rt, logger, _ := startEx(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := newAPIServer(managementHandler(rt), logger, testTimeouts)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	t.Cleanup(func() { // before startEx's Shutdown
		srv.Close()
		<-served
	})
	sub := rt.Subscribe(events.SubscribeOptions{Server: "ex", Buffer: 1 << 14})
	defer sub.Close()
	testutil.AwaitState(t, sub, 30*time.Second, "ex ready", exStatus(rt), func(s status.State, _ int) bool { return s == status.Ready })
	if st := rt.Servers(); len(st) != 1 || !st[0].Ready {
		t.Fatalf("ex not ready: %+v", st)
	}
	return ln.Addr().String()
}

// startEx starts a runtime with the example server ex (timeout_seconds 5)
// logging into a buffer, shut down when the test ends.
func startEx(t *testing.T) (*runtime.Runtime, *slog.Logger, *testutil.Buffer) {
	t.Helper()
	dir := t.TempDir()
	testutil.WriteConfig(t, dir, config.Server{Name: "ex", Type: config.TypeLocal, Enabled: true, TimeoutSeconds: 5,
		Command: []string{demoBin, "serve"}, Env: map[string]string{testutil.MarkerEnv: marker}})
	logs := &testutil.Buffer{}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	rt, err := runtime.Start(context.Background(), runtime.Options{StateDir: dir, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := rt.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	return rt, logger, logs
}

// trickle writes head, then the bytes of slow one every 50 ms, until the
// server closes the connection or stop is closed; it returns how the
// connection ended for the reader: the first line of an answer, or "".
func trickle(t *testing.T, addr, head, slow string) (answer string, elapsed time.Duration) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for i := 0; i < len(slow); i++ {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			if _, err := conn.Write([]byte{slow[i]}); err != nil {
				return
			}
		}
	}()
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, _ := bufio.NewReader(conn).ReadString('\n')
	elapsed = time.Since(start)
	close(stop)
	<-wrote
	return strings.TrimSpace(line), elapsed
}

// TestAPIServerCutsOffSlowClients: a client that sends its headers, or its
// body, one byte at a time is cut off by the read timeouts instead of
// holding the connection for as long as it likes.
func TestAPIServerCutsOffSlowClients(t *testing.T) {
	addr := serveTestAPI(t)
	// Headers: 60 bytes at 50 ms would take 3 s.
	answer, elapsed := trickle(t, addr, "GET /healthz HTTP/1.1\r\n", "Host: 127.0.0.1\r\nX-Slow: "+strings.Repeat("a", 30)+"\r\n\r\n")
	if strings.Contains(answer, " 200 ") || elapsed > 2*time.Second {
		t.Errorf("slow headers: answer %q after %v, want the connection cut off near ReadHeaderTimeout (300ms)", answer, elapsed)
	}
	// Body: the headers at once, then 60 bytes at 50 ms (3 s).
	body := `{"arguments": {"text": "` + strings.Repeat("b", 36) + `"}}`
	head := "POST /api/mcp/tools/ex__echo/call HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
		"Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n"
	answer, elapsed = trickle(t, addr, head, body)
	if strings.Contains(answer, " 200 ") || elapsed > 2*time.Second {
		t.Errorf("slow body: answer %q after %v, want the request cut off near ReadTimeout (500ms)", answer, elapsed)
	}
}

// TestAPIServerLongToolCall: a tool call that takes longer than the
// server's Read and Write timeouts, but within its own timeout_seconds,
// still gets its answer: its route sets a write deadline of its own, and
// the read timeout ends with the body.
func TestAPIServerLongToolCall(t *testing.T) {
	addr := serveTestAPI(t)
	req, _ := http.NewRequest("POST", "http://"+addr+"/api/mcp/tools/ex__sleep/call", strings.NewReader(`{"arguments": {"ms": 1500}}`))
	req.Header.Set("Content-Type", "application/json")
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("a 1.5 s call behind 500 ms server timeouts: %v", err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(got), "slept 1500ms") {
		t.Fatalf("a 1.5 s call: %d %s, want 200 with its answer", resp.StatusCode, got)
	}
	client.CloseIdleConnections()
}

// TestAPIServerClosesIdleConnections: a kept-alive connection that sends
// no next request is closed by the server after its Idle timeout (1 s
// here), not left open, and not cut at the shorter Read timeout (500 ms,
// which net/http would use for an unset Idle).
func TestAPIServerClosesIdleConnections(t *testing.T) {
	addr := serveTestAPI(t)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second)) // bounds the whole test
	r := bufio.NewReader(conn)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	if _, err := io.Copy(io.Discard, resp.Body); err != nil || resp.StatusCode != http.StatusOK || resp.Close {
		t.Fatalf("GET /healthz: %d (close %v), %v; want 200 on a kept-alive connection", resp.StatusCode, resp.Close, err)
	}
	idle := time.Now()
	n, err := r.Read(make([]byte, 1))
	elapsed := time.Since(idle)
	if n != 0 || !errors.Is(err, io.EOF) {
		t.Fatalf("the idle connection gave %d bytes, %v after %v; want EOF: closed by the server", n, err, elapsed)
	}
	if elapsed < testTimeouts.Idle*3/4 || elapsed > testTimeouts.Idle+3*time.Second {
		t.Errorf("the idle connection was closed after %v, want about the Idle timeout of %v", elapsed, testTimeouts.Idle)
	}
}

// exStatus is the status of the one server, ex.
func exStatus(rt *runtime.Runtime) status.Server {
	for _, s := range rt.Status().Servers {
		if s.Name == "ex" {
			return s
		}
	}
	return status.Server{}
}
