package exampleserver

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// serverCommand returns a command that runs this test binary as the example
// server with the given Main arguments (see TestMain).
func serverCommand(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(),
		mainArgsEnv+"="+string(raw),
		// Under -race a process exiting with status 0 sleeps a second first,
		// which would make every clean shutdown here look slow.
		"GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"),
	)
	return cmd
}

// serverProcess is the example server running as a child process, with a
// client connected to its stdio.
type serverProcess struct {
	cmd     *exec.Cmd
	stdin   *os.File // the parent's end; closing it asks the server to exit
	session *mcp.ClientSession
	stderr  *syncBuffer
	exited  chan struct{} // closed once cmd.Wait has returned
}

// startProcess starts the server process and connects a client to it. The
// test owns the pipes rather than using mcp.CommandTransport, so that it
// alone waits for the process and can read its exit status safely.
func startProcess(t *testing.T, env []string, args ...string) *serverProcess {
	t.Helper()
	p := &serverProcess{cmd: serverCommand(t, args...), stderr: &syncBuffer{}, exited: make(chan struct{})}
	p.cmd.Env = append(p.cmd.Env, env...)
	p.cmd.Stderr = p.stderr
	childIn, stdin, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, childOut, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	p.cmd.Stdin, p.cmd.Stdout, p.stdin = childIn, childOut, stdin
	err = p.cmd.Start()
	childIn.Close()
	childOut.Close()
	if err != nil {
		stdin.Close()
		stdout.Close()
		t.Fatalf("starting the server process: %v", err)
	}
	go func() {
		p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() { p.close(t) })

	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	p.session, err = newClient().Connect(ctx, &mcp.IOTransport{Reader: stdout, Writer: stdin}, nil)
	if err != nil {
		t.Fatalf("connecting to the server process: %v (stderr %q)", err, p.stderr.String())
	}
	return p
}

// close closes the server's stdin, waits for the process to exit (killing it
// if it does not) and returns its exit code. It may be called more than once.
func (p *serverProcess) close(t *testing.T) int {
	t.Helper()
	p.stdin.Close()
	select {
	case <-p.exited:
	case <-time.After(testTimeout):
		p.cmd.Process.Kill()
		<-p.exited
		t.Error("the server process did not exit after its stdin was closed")
	}
	if p.session != nil {
		p.session.Close()
	}
	return p.cmd.ProcessState.ExitCode()
}

func TestProcessServesOverStdio(t *testing.T) {
	p := startProcess(t, []string{"EXAMPLESERVER_TEST_FROM_PARENT=set by the parent"})
	if got := onlyText(t, callTool(t, p.session, "env", map[string]any{"name": "EXAMPLESERVER_TEST_FROM_PARENT"})); got != "set by the parent" {
		t.Errorf("env = %q, want %q", got, "set by the parent")
	}
	if got := onlyText(t, callTool(t, p.session, "stderr", map[string]any{"text": "captured line"})); got != "ok" {
		t.Errorf("stderr tool = %q, want ok", got)
	}
	if code := p.close(t); code != ExitCodeOK {
		t.Errorf("exit code = %d, want %d", code, ExitCodeOK)
	}
	if got, want := p.stderr.String(), ReadyLine+"\ncaptured line\n"; got != want {
		t.Errorf("stderr = %q, want %q", got, want)
	}
}

func TestProcessPanicOnTool(t *testing.T) {
	p := startProcess(t, nil, "-panic-on-tool", "echo")
	// Other tools still work until the named one is called.
	if got := onlyText(t, callTool(t, p.session, "add", map[string]any{"a": 1, "b": 1})); got != "2" {
		t.Errorf("add = %q, want 2", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if _, err := p.session.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}}); err == nil {
		t.Error("calling the panicking tool succeeded, want an error")
	}
	if code := p.close(t); code != 2 {
		t.Errorf("exit code = %d, want 2 (a Go panic)", code)
	}
	if !strings.Contains(p.stderr.String(), `PanicOnTool "echo"`) {
		t.Errorf("stderr does not show the panic: %q", p.stderr.String())
	}
}

func TestProcessExitAfterCalls(t *testing.T) {
	p := startProcess(t, nil, "-exit-after-calls", "1")
	if got := onlyText(t, callTool(t, p.session, "echo", map[string]any{"text": "last"})); got != "last" {
		t.Errorf("echo = %q, want last", got)
	}
	if code := p.close(t); code != ExitCodeExitRequested {
		t.Errorf("exit code = %d, want %d", code, ExitCodeExitRequested)
	}
}

func TestProcessGarbageStdout(t *testing.T) {
	cmd := serverCommand(t, "-garbage-stdout")
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	out, err := cmd.Output()
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitCode() != ExitCodeFailure {
		t.Fatalf("running with -garbage-stdout: %v, want exit code %d", err, ExitCodeFailure)
	}
	assertGarbage(t, strings.Split(strings.TrimSuffix(string(out), "\n"), "\n"))
	if !hasLine(stderr.String(), ReadyLine) {
		t.Errorf("stderr = %q, want the ready line", stderr.String())
	}
}
