//go:build unix

package exampleserver

import (
	"syscall"
	"testing"
)

func TestProcessSIGTERM(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		survive bool
	}{
		{"default", nil, false},
		{"ignored", []string{"-ignore-sigterm"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := startProcess(t, nil, tt.args...)
			// An answered call shows Run has started, so SIGTERM is ignored by now.
			callTool(t, p.session, "echo", map[string]any{"text": "up"})
			if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatalf("sending SIGTERM: %v", err)
			}
			// A process that did not ignore SIGTERM dies well before this
			// call can be answered.
			_, err := p.session.CallTool(t.Context(), sleepParams(300))
			if survived := err == nil; survived != tt.survive {
				t.Errorf("call after SIGTERM: err = %v, want survival %v", err, tt.survive)
			}
			code := p.close(t)
			status := p.cmd.ProcessState.Sys().(syscall.WaitStatus)
			if tt.survive && code != ExitCodeOK {
				t.Errorf("exit code = %d, want %d after stdin closed", code, ExitCodeOK)
			}
			if !tt.survive && (!status.Signaled() || status.Signal() != syscall.SIGTERM) {
				t.Errorf("wait status = %v, want killed by SIGTERM", status)
			}
		})
	}
}
