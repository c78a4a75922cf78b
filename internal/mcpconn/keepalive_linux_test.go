package mcpconn

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/internal/procs"
	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/tools"
)

// A stdio server whose process is stopped (SIGSTOP) counts as hung at the
// next tick, without waiting for a probe's interval; its group is killed
// (SIGKILL ends a stopped process) and nothing is left. A stopped worker
// behind a wrapper, with no call in flight, is found by the usual rules
// (within two intervals), its error naming the stop.
func TestKeepAliveSpotsAStoppedProcess(t *testing.T) {
	for _, wrapped := range []bool{false, true} {
		opts := freezeServer("")
		if wrapped {
			opts.Server.Command = []string{"/bin/sh", "-c", `"$0" serve; exit 0`, demoBin}
		}
		opts.KeepAlive = testInterval
		c, err := testDial(context.Background(), opts)
		if err != nil {
			t.Fatal(err)
		}
		target := -c.PID() // the group
		if wrapped {
			// Only the example server behind sh is stopped.
			testutil.Eventually(t, 10*time.Second, "the wrapped server", func() bool {
				for _, pid := range testutil.LiveInGroup(c.PID()) {
					if pid != c.PID() {
						target = pid
						return true
					}
				}
				return false
			})
		}
		if err := syscall.Kill(target, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		stopped := time.Now()
		select {
		case <-c.Done():
		case <-time.After(10 * time.Second):
			syscall.Kill(target, syscall.SIGCONT)
			t.Fatal("a stopped server was not declared lost")
		}
		if took := time.Since(stopped); took > testInterval+lostMargin {
			t.Errorf("wrapped=%v: declared lost %v after SIGSTOP, want at the next tick (%v)", wrapped, took, testInterval)
		}
		if err := c.Err(); !errors.Is(err, tools.ErrUnresponsive) || !strings.Contains(err.Error(), "stopped") {
			t.Errorf("wrapped=%v: Err = %v, want ErrUnresponsive saying the process is stopped", wrapped, err)
		}
		c.Close()
		assertNoProcesses(t)
	}
}

// A stopped process makes the verdict quick, not certain: a healthy
// server whose group holds a stopped child answers its probes and lives.
func TestKeepAliveSparesAServerWithAStoppedChild(t *testing.T) {
	opts := freezeServer("")
	opts.Server.Command = []string{"/bin/sh", "-c", `sleep 100 & kill -STOP $!; exec "$0" serve`, demoBin}
	opts.KeepAlive = testInterval
	c, err := testDial(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { c.Close(); assertNoProcesses(t) }()
	select {
	case <-c.Done():
		t.Fatalf("a server that answers every probe was declared lost for a stopped child: %v", c.Err())
	case <-time.After(8 * testInterval):
	}
	if _, err := c.CallTool(context.Background(), "echo", map[string]any{"text": "x"}); err != nil {
		t.Errorf("a call afterwards: %v", err)
	}
}

// A stopped child does not take the in-flight rule away: a server busy on
// a call within its timeout_seconds (frozen 1.5 s of 10), which answers no
// probe meanwhile, is not killed because a child of its group is stopped.
func TestKeepAliveSparesABusyServerWithAStoppedChild(t *testing.T) {
	opts := freezeServer("2025-11-25")
	opts.Server.Command = []string{"/bin/sh", "-c", `sleep 100 & kill -STOP $!; exec "$0" serve -freeze-tool`, demoBin}
	busySpared(t, opts, func(c *Conn) bool { return procs.GroupStopped(c.PID()) })
}
