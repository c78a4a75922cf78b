package main

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// -mcp-allow and -mcp-deny filter the HTTP gateway: without -mcp-listen
// they are a usage error (exit 2), not silently ignored. (peers/ checks
// the filter itself through the TypeScript SDK's client.)
func TestRunMCPFilterNeedsListen(t *testing.T) {
	for _, flag := range []string{"-mcp-allow", "-mcp-deny"} {
		out, err := demoCommand("run", "-state-dir", t.TempDir(), "-listen", "127.0.0.1:0", flag, "ex__*").CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(string(out), "need -mcp-listen") {
			t.Errorf("demo run %s without -mcp-listen: %v\n%s", flag, err, out)
		}
	}
}

// A gateway filter glob that does not parse is a usage error (exit 2)
// found before the runtime starts: no server is started, nothing is
// logged (a log line would mean the runtime ran), and demo run does not
// go on serving its API without the gateway.
func TestGatewayBadFilterIsAUsageError(t *testing.T) {
	dir := gatewayDir(t)
	for _, args := range [][]string{
		{"gateway", "-state-dir", dir, "-allow", "["},
		{"gateway", "-state-dir", dir, "-deny", "ex__*,["},
		{"gateway", "-state-dir", dir, "-startup-concurrency", "-1"},
		{"run", "-state-dir", dir, "-listen", "127.0.0.1:0", "-mcp-listen", "127.0.0.1:0", "-mcp-allow", "["},
		{"run", "-state-dir", dir, "-listen", "127.0.0.1:0", "-mcp-listen", "127.0.0.1:0", "-mcp-deny", "["},
	} {
		cmd := demoCommand(args...)
		out := &lockedBuffer{}
		cmd.Stdout, cmd.Stderr = out, out
		err := runBounded(t, cmd, 30*time.Second)
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.HasPrefix(out.String(), "demo "+args[0]+": ") ||
			strings.Contains(out.String(), "msg=") {
			t.Errorf("demo %s: %v, want exit 2 with a usage error and no log\n%s", strings.Join(args, " "), err, out.String())
		}
	}
}
