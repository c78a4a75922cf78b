//go:build unix

package main

import (
	"io"
	"log/slog"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/runtime"
)

// TestRunShutdownWaitsForTheRuntime: with an event stream open and a
// server whose processes take longer to stop than the HTTP server's grace
// (they ignore SIGTERM: stopping waits out the stop grace twice, then
// SIGKILLs), the stream ends cleanly with the runtime and nothing is
// reported as a request still running.
func TestRunShutdownWaitsForTheRuntime(t *testing.T) {
	dir := t.TempDir()
	slow := config.Server{Name: "slow", Type: config.TypeLocal, Enabled: true,
		Command: []string{"/bin/sh", "-c", `trap "" TERM; "$DEMO" serve; sleep 60`},
		Env:     map[string]string{"DEMO": demoBin, testutil.MarkerEnv: marker}}
	testutil.WriteConfig(t, dir, slow)
	logs := &lockedBuffer{}
	stdout, out := io.Pipe()
	code := make(chan int, 1)
	go func() {
		defer out.Close()
		// In this process: serveAPI catches SIGTERM before it prints the
		// listening line.
		code <- serveAPI(out, slog.New(slog.NewTextHandler(logs, nil)),
			runtime.Options{StateDir: dir, StopGrace: httpShutdownGrace * 3 / 4}, "127.0.0.1:0", otelSetup{}, nil)
	}()
	base := readListenLine(t, stdout, logs)
	awaitState(t, base, "slow", "ready", 30*time.Second)
	resp, err := http.Get(base + "/api/mcp/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_ = syscall.Kill(syscall.Getpid(), syscall.SIGTERM)
	read := make(chan error, 1)
	go func() { _, err := io.Copy(io.Discard, resp.Body); read <- err }()
	select {
	case err := <-read:
		if err != nil {
			t.Errorf("the event stream at shutdown: %v, want a clean end", err)
		}
	case <-time.After(runtimeShutdownGrace + httpShutdownGrace):
		t.Fatalf("the event stream did not end\n%s", logs.String())
	}
	if c := <-code; c != 0 {
		t.Errorf("serveAPI = %d, want 0\n%s", c, logs.String())
	}
	if strings.Contains(logs.String(), "still running at shutdown") {
		t.Errorf("an open event stream was reported as a request still running:\n%s", logs.String())
	}
}
