package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/internal/testutil"
)

var (
	demoBin string
	marker  = fmt.Sprintf("demo-test-%d", os.Getpid())
)

func TestMain(m *testing.M) { testutil.Main(m, &demoBin, marker) }

// demoCommand runs the demo binary with the marker in its environment, which
// the servers it starts inherit.
func demoCommand(args ...string) *exec.Cmd {
	cmd := exec.Command(demoBin, args...)
	cmd.Env = append(os.Environ(), testutil.MarkerEnv+"="+marker)
	return cmd
}

func TestTour(t *testing.T) {
	cmd := demoCommand()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := runBounded(t, cmd, time.Minute); err != nil {
		t.Fatalf("tour: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{
		"example__echo", "example__add", "example__image", "example__resource",
		`-> "hello from the host"`, `-> "42"`, "image image/png", `"[resource: demo://resource/1]"`,
		"[is_error]", "unknown tool: true", "example  ready  true   10",
		"are gone",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("tour output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out+stderr.String(), "demo-secret-value-1234") {
		t.Errorf("the demo's planted secret appears in its output")
	}
	if left := testutil.ProcessesWithMarker(marker); len(left) > 0 {
		t.Errorf("processes left after the tour: %v", left)
	}
}

func TestRunUntilSIGTERM(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteConfig(t, dir, config.Server{Name: "ex", Type: config.TypeLocal, Command: []string{demoBin, "serve"}, Enabled: true})
	cmd := demoCommand("run", "-state-dir", dir)
	logs := &lockedBuffer{}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(logs.String(), "server ready") {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("no server ready line:\n%s", logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	if err := waitBounded(cmd, 30*time.Second); err != nil {
		t.Fatalf("demo run after SIGTERM: %v\n%s", err, logs.String())
	}
	if left := testutil.ProcessesWithMarker(marker); len(left) > 0 {
		t.Fatalf("processes left after demo run stopped: %v", left)
	}
}

func TestRunNeedsStateDir(t *testing.T) {
	out, err := demoCommand("run").CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "-state-dir is required") {
		t.Fatalf("demo run without -state-dir: %v\n%s", err, out)
	}
}

func TestUnknownCommand(t *testing.T) {
	out, err := demoCommand("bogus").CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), `unknown command "bogus"`) {
		t.Fatalf("demo bogus: %v\n%s", err, out)
	}
}

func runBounded(t *testing.T, cmd *exec.Cmd, limit time.Duration) error {
	t.Helper()
	if err := cmd.Start(); err != nil {
		return err
	}
	return waitBounded(cmd, limit)
}

// waitBounded waits for cmd, killing it after limit.
func waitBounded(cmd *exec.Cmd, limit time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(limit):
		_ = cmd.Process.Kill()
		<-done
		return fmt.Errorf("still running after %s; killed", limit)
	}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
