package exampleserver

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestMainRejectsBadArguments(t *testing.T) {
	tests := [][]string{
		{"-no-such-flag"},
		{"-exit-after-calls", "many"},
		{"-exit-after-calls", "-1"},
		{"-initialize-delay", "-1s"},
		{"-initialize-delay", "soon"},
		{"-initialize-barrier", "3"}, // without -initialize-dir
		{"-initialize-dir", "/tmp", "-initialize-barrier", "-1"},
		{"positional"},
	}
	for _, args := range tests {
		stderr := &syncBuffer{}
		in, out := io.Pipe()
		if got := mainWith(args, in, out, stderr); got != ExitCodeUsage {
			t.Errorf("mainWith(%q) = %d, want %d", args, got, ExitCodeUsage)
		}
		if stderr.String() == "" {
			t.Errorf("mainWith(%q) explained nothing on stderr", args)
		}
		in.Close()
	}
}

func TestMainHelp(t *testing.T) {
	stderr := &syncBuffer{}
	in, out := io.Pipe()
	defer in.Close()
	if got := mainWith([]string{"-h"}, in, out, stderr); got != ExitCodeOK {
		t.Errorf("mainWith(-h) = %d, want %d", got, ExitCodeOK)
	}
	for _, flag := range []string{"-hang-initialize", "-exit-after-calls", "-garbage-stdout", "-ignore-sigterm", "-panic-on-tool", "-name", "-change-tool", "-fault-tools", "-protocol", "-initialize-delay", "-initialize-dir", "-initialize-barrier"} {
		if !strings.Contains(stderr.String(), flag) {
			t.Errorf("usage does not mention %s:\n%s", flag, stderr.String())
		}
	}
}

// mainHarness runs mainWith on in-memory pipes, as a process would on stdio.
type mainHarness struct {
	transport *mcp.IOTransport // the client's side of the pipes
	stderr    *syncBuffer
	code      chan int // receives the exit code
}

// startMain starts mainWith(args, ...) in a goroutine.
func startMain(args ...string) *mainHarness {
	serverIn, clientOut := io.Pipe()
	clientIn, serverOut := io.Pipe()
	h := &mainHarness{
		transport: &mcp.IOTransport{Reader: clientIn, Writer: clientOut},
		stderr:    &syncBuffer{},
		code:      make(chan int, 1),
	}
	go func() { h.code <- mainWith(args, serverIn, serverOut, h.stderr) }()
	return h
}

// wait returns the exit code, failing the test if mainWith does not return.
func (h *mainHarness) wait(t *testing.T) int {
	t.Helper()
	select {
	case code := <-h.code:
		return code
	case <-time.After(testTimeout):
		t.Fatal("mainWith did not return")
		return -1
	}
}

func TestMainGarbageStdoutExitsOne(t *testing.T) {
	h := startMain("-garbage-stdout")
	defer h.transport.Writer.Close()
	assertGarbage(t, readLines(t, h.transport.Reader))
	if got := h.wait(t); got != ExitCodeFailure {
		t.Errorf("exit code = %d, want %d", got, ExitCodeFailure)
	}
	if !strings.Contains(h.stderr.String(), ErrGarbageStdout.Error()) {
		t.Errorf("stderr = %q, want the reason for the failure", h.stderr.String())
	}
}

func TestMainExitAfterCallsExitsThree(t *testing.T) {
	h := startMain("-exit-after-calls", "1", "-name", "flag-name")
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	cs, err := newClient().Connect(ctx, h.transport, nil)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer cs.Close()
	if got := cs.InitializeResult().ServerInfo.Name; got != "flag-name" {
		t.Errorf("server name = %q, want flag-name", got)
	}
	if got := onlyText(t, callTool(t, cs, "add", map[string]any{"a": 40, "b": 2})); got != "42" {
		t.Errorf("add = %q, want 42", got)
	}
	if got := h.wait(t); got != ExitCodeExitRequested {
		t.Errorf("exit code = %d, want %d", got, ExitCodeExitRequested)
	}
}

func TestMainExitsZeroWhenStdinCloses(t *testing.T) {
	h := startMain()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	cs, err := newClient().Connect(ctx, h.transport, nil)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	if got := cs.InitializeResult().ServerInfo.Name; got != DefaultName {
		t.Errorf("server name = %q, want %q", got, DefaultName)
	}
	cs.Close()
	if got := h.wait(t); got != ExitCodeOK {
		t.Errorf("exit code = %d, want %d", got, ExitCodeOK)
	}
	if got, want := h.stderr.String(), ReadyLine+"\n"; got != want {
		t.Errorf("stderr = %q, want %q", got, want)
	}
}
