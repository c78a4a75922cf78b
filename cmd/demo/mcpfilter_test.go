package main

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
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
