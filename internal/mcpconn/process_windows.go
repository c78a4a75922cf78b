package mcpconn

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/windows"

	"github.com/openprogram/mcpvisor/internal/procs"
)

// ownTree prepares cmd to start in a Job Object of its own (see
// processTree.adopt): it starts suspended, so that it runs only once it is
// in the job, and in a new process group, which keeps the console's
// Ctrl+C from reaching it (the runtime stops its servers in order, as
// Setpgid does on Unix). CREATE_NO_WINDOW: a console server started by a
// GUI or service host (which has no console to share) would otherwise get
// a console window of its own, one per server; its stdio is the pipes
// either way. A batch file (npx.cmd) is run through cmd.exe with a
// command line we quote ourselves (batch.go).
//
// Windows code: compiled and vetted by CI, never run there (see README).
func ownTree(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{
		CreationFlags: serverCreationFlags,
	}
	if cmd.Err != nil {
		return
	}
	// os/exec resolved a bare name through PATH and PATHEXT already (npx
	// → …\npx.cmd); a path (absolute, or relative to Dir) it resolves
	// only at Start: resolve it the same way here, to know what will run.
	script := cmd.Path
	if !filepath.IsAbs(script) && cmd.Dir != "" {
		script = filepath.Join(cmd.Dir, script)
	}
	if abs, err := filepath.Abs(script); err == nil {
		script = abs
	}
	if lp, err := exec.LookPath(script); err == nil {
		script = lp
	}
	if !isBatchFile(script) {
		return
	}
	sys, err := windows.GetSystemDirectory()
	if err != nil {
		cmd.Err = fmt.Errorf("finding cmd.exe to run %s: %w", filepath.Base(cmd.Path), err)
		return
	}
	line, err := batchCommandLine(script, cmd.Args[1:])
	if err != nil {
		cmd.Err = err
		return
	}
	// With CmdLine set, os/exec passes Path as the program and CmdLine as
	// its command line, untouched.
	cmd.Path = filepath.Join(sys, "cmd.exe")
	cmd.SysProcAttr.CmdLine = line
}

// serverCreationFlags are the CreationFlags of every stdio server's
// process (see ownTree).
const serverCreationFlags = windows.CREATE_SUSPENDED | windows.CREATE_NEW_PROCESS_GROUP | windows.CREATE_NO_WINDOW

// processTree holds the server's Job Object once the process started.
type processTree struct {
	job *procs.Job
}

// adopt puts the suspended leader in a new job and resumes it; proc
// learns the job, so that the runtime's KillAll terminates it too.
func (t *processTree) adopt(pid int, proc *procs.Proc) error {
	job, err := procs.NewJob()
	if err != nil {
		return err
	}
	proc.SetJob(job)
	if err := job.Adopt(pid); err != nil {
		job.Close()
		return err
	}
	t.job = job
	return nil
}

// escalation is the stop after stdin's close: after one grace, terminate
// the job. Windows has no SIGTERM for a console program: a
// CTRL_BREAK_EVENT reaches only a process on our console, and a host
// without one (a service, a GUI) has none; so closing stdin is the polite
// request, and the grace its wait.
func (t *processTree) escalation(int) []func() {
	return []func(){t.job.Terminate}
}

// finish terminates what the leader left in the job, waits up to grace
// for it to be gone, and closes the job.
func (t *processTree) finish(_ int, _ *procs.Proc, grace time.Duration) {
	t.job.Terminate()
	t.job.WaitEmpty(grace)
	t.job.Close()
}

// kill terminates the job at once.
func (t *processTree) kill(int) { t.job.Terminate() }
