//go:build unix

package mcpconn

import (
	"os/exec"
	"syscall"
	"time"

	"github.com/openprogram/mcpvisor/internal/procs"
)

// ownTree makes cmd the leader of a process group of its own: the group
// is the server's tree, which the stop kills, and the terminal's Ctrl+C
// (sent to the foreground group) does not reach it, so the runtime stops
// its servers in order.
func ownTree(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// processTree is the hold on a server's tree: on Unix the process group,
// whose id is the leader's pid, so there is nothing to keep.
type processTree struct{}

// adopt has nothing to do: Setpgid made the group at the start.
func (processTree) adopt(int, *procs.Proc) error { return nil }

// escalation is the stop after stdin's close, one step per grace: SIGTERM
// the group, then SIGKILL it.
func (processTree) escalation(pgid int) []func() {
	return []func(){
		func() { procs.SignalGroup(pgid, syscall.SIGTERM) },
		func() { procs.SignalGroup(pgid, syscall.SIGKILL) },
	}
}

// finish ends what the reaped leader left: the marked processes first
// (found while alive, those that left the group included; Linux), then
// the group.
func (processTree) finish(pgid int, proc *procs.Proc, grace time.Duration) {
	proc.Finish(pgid, grace)
}

// kill SIGKILLs the group at once.
func (processTree) kill(pgid int) { procs.SignalGroup(pgid, syscall.SIGKILL) }
