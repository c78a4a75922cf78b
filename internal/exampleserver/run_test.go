package exampleserver

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestRunServesUntilStdinCloses(t *testing.T) {
	stderr := &syncBuffer{}
	h := startRun(context.Background(), Options{Name: "run-name", Stderr: stderr})
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	cs, err := newClient().Connect(ctx, h.transport, nil)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	if got := cs.InitializeResult().ServerInfo.Name; got != "run-name" {
		t.Errorf("server name = %q, want run-name", got)
	}
	if got := onlyText(t, callTool(t, cs, "echo", map[string]any{"text": "over pipes"})); got != "over pipes" {
		t.Errorf("echo = %q, want %q", got, "over pipes")
	}
	callTool(t, cs, "stderr", map[string]any{"text": "tool line"})
	cs.Close()
	if err := h.wait(t); err != nil {
		t.Errorf("Run = %v, want nil after the client closed stdin", err)
	}
	if got, want := stderr.String(), ReadyLine+"\ntool line\n"; got != want {
		t.Errorf("stderr = %q, want %q", got, want)
	}
}

func TestRunExitAfterCalls(t *testing.T) {
	h := startRun(context.Background(), Options{ExitAfterCalls: 2, Stderr: &syncBuffer{}})
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	cs, err := newClient().Connect(ctx, h.transport, nil)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer cs.Close()

	// Listing is not a tool call, and a tool error still answers a call.
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	if got := onlyText(t, callTool(t, cs, "echo", map[string]any{"text": "one"})); got != "one" {
		t.Errorf("first call = %q, want one", got)
	}
	select {
	case err := <-h.done:
		t.Fatalf("Run returned %v after one call, want it to wait for two", err)
	case <-time.After(50 * time.Millisecond):
	}
	// The last call must be answered before Run returns.
	if res := callTool(t, cs, "fail", nil); !res.IsError {
		t.Errorf("second call: IsError = false, want the fail tool's error")
	}
	if err := h.wait(t); !errors.Is(err, ErrExitRequested) {
		t.Errorf("Run = %v, want ErrExitRequested", err)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "three"}}); err == nil {
		t.Error("a call after the exit succeeded, want an error")
	}
}

func TestRunContextEndStopsRunningCalls(t *testing.T) {
	runCtx, stopRun := context.WithCancel(context.Background())
	defer stopRun()
	stderr := &syncBuffer{}
	h := startRun(runCtx, Options{Stderr: stderr})
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	cs, err := newClient().Connect(ctx, h.transport, nil)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer cs.Close()

	// No deadline on the call: only Run's shutdown may end it.
	callCtx, cancelCall := context.WithCancel(context.Background())
	defer cancelCall()
	type result struct {
		res *mcp.CallToolResult
		err error
	}
	callResult := make(chan result, 1)
	go func() {
		res, err := cs.CallTool(callCtx, sleepParams(time.Hour.Milliseconds()))
		callResult <- result{res, err}
	}()
	// The sleep call cannot be observed from here; a stderr call answered
	// after it was sent makes it very likely to be running. Either way Run
	// must return, which is what this test checks.
	callTool(t, cs, "stderr", map[string]any{"text": "sleep sent"})
	stopRun()

	if err := h.wait(t); !errors.Is(err, context.Canceled) {
		t.Errorf("Run = %v, want context.Canceled", err)
	}
	select {
	case r := <-callResult:
		// Depending on whether the cancelled handler's answer is written
		// before the session closes, the client sees a tool error or a
		// broken connection; never a finished sleep.
		if r.err == nil && !r.res.IsError {
			t.Errorf("the hour-long sleep call succeeded: %+v", r.res.Content)
		}
	case <-time.After(testTimeout):
		t.Fatal("the sleep call never returned")
	}
}

func TestRunHangInitialize(t *testing.T) {
	stderr := &syncBuffer{}
	h := startRun(context.Background(), Options{HangInitialize: true, Stderr: stderr})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	cs, err := newClient().Connect(ctx, h.transport, nil)
	if err == nil {
		cs.Close()
		t.Fatal("Connect succeeded, want a deadline error")
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Connect error = %v, want context.DeadlineExceeded", err)
	}
	// A failed Connect closes the client's side; Run sees the end of its input.
	h.transport.Reader.Close()
	h.transport.Writer.Close()
	if err := h.wait(t); err != nil {
		t.Errorf("Run = %v, want nil once stdin is closed", err)
	}
	if !hasLine(stderr.String(), ReadyLine) {
		t.Errorf("stderr = %q, want the ready line", stderr.String())
	}
}

func TestRunHangInitializeStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	stderr := &syncBuffer{}
	h := startRun(ctx, Options{HangInitialize: true, Stderr: stderr})
	defer h.transport.Writer.Close()
	// Writes must keep flowing: a hung server still reads its input.
	if _, err := io.WriteString(h.transport.Writer, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`+"\n"); err != nil {
		t.Fatalf("writing a request: %v", err)
	}
	waitForLine(t, stderr, ReadyLine)
	cancel()
	if err := h.wait(t); !errors.Is(err, context.Canceled) {
		t.Errorf("Run = %v, want context.Canceled", err)
	}
	// Nothing was ever answered: out holds no bytes before it is closed.
	data, err := io.ReadAll(h.transport.Reader)
	if err != nil || len(data) != 0 {
		t.Errorf("read %q, %v from stdout, want nothing", data, err)
	}
}

func TestRunGarbageStdout(t *testing.T) {
	stderr := &syncBuffer{}
	h := startRun(context.Background(), Options{GarbageStdout: true, Stderr: stderr})
	defer h.transport.Writer.Close()
	lines := readLines(t, h.transport.Reader)
	if err := h.wait(t); !errors.Is(err, ErrGarbageStdout) {
		t.Errorf("Run = %v, want ErrGarbageStdout", err)
	}
	assertGarbage(t, lines)
	if !hasLine(stderr.String(), ReadyLine) {
		t.Errorf("stderr = %q, want the ready line", stderr.String())
	}
}

// readLines reads r to its end and splits it into lines.
func readLines(t *testing.T, r io.Reader) []string {
	t.Helper()
	var lines []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reading stdout: %v", err)
	}
	return lines
}

// assertGarbage checks that lines hold some output and none of it is JSON.
func assertGarbage(t *testing.T, lines []string) {
	t.Helper()
	if len(lines) == 0 {
		t.Fatal("no lines on stdout, want garbage")
	}
	for _, line := range lines {
		if strings.TrimSpace(line) == "" || json.Valid([]byte(line)) {
			t.Errorf("stdout line %q is empty or valid JSON, want garbage", line)
		}
	}
}
