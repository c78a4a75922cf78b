package procs

import (
	"fmt"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Job is the Windows Job Object that holds one server's process tree: the
// Windows counterpart of the Unix process group. Every process the leader
// starts is in the job too (a job's processes cannot leave it: we never
// grant JOB_OBJECT_LIMIT_BREAKAWAY_OK), so terminating the job ends the
// whole tree, wrappers (npx.cmd → cmd.exe → node) included. It is created
// with JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE: when the last handle closes,
// which is at the latest when this process dies, however it dies, Windows
// terminates every process still in it, so a crashed runtime leaves no
// orphan. The handle is not inheritable, so no child holds it.
//
// Its methods are safe for concurrent use and do nothing on a nil Job.
// This file is compiled, never run, by the Linux CI.
type Job struct {
	mu sync.Mutex
	h  windows.Handle // 0 once closed
}

// NewJob creates an empty job that kills its processes when closed.
func NewJob() (*Job, error) {
	h, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return nil, fmt.Errorf("creating a job object: %w", err)
	}
	var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if _, err := windows.SetInformationJobObject(h, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		_ = windows.CloseHandle(h)
		return nil, fmt.Errorf("setting the job object's kill-on-close limit: %w", err)
	}
	return &Job{h: h}, nil
}

// Adopt puts process pid, started suspended (CREATE_SUSPENDED), in the
// job and then lets it run. Started suspended, it cannot have started a
// child before it is in the job: there is no window in which a grandchild
// escapes. os/exec gives no handle on the primary thread, so the threads
// of pid are found in a thread snapshot (a suspended new process has only
// its primary thread). On an error the caller kills the process.
func (j *Job) Adopt(pid int) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.h == 0 {
		return fmt.Errorf("the job object of process %d is closed", pid)
	}
	p, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(pid))
	if err != nil {
		return fmt.Errorf("opening process %d: %w", pid, err)
	}
	err = windows.AssignProcessToJobObject(j.h, p)
	_ = windows.CloseHandle(p)
	if err != nil {
		return fmt.Errorf("putting process %d in its job object: %w", pid, err)
	}
	return resumeThreads(pid)
}

// resumeThreads resumes every thread of process pid.
func resumeThreads(pid int) error {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	if err != nil {
		return fmt.Errorf("listing the threads of process %d: %w", pid, err)
	}
	defer windows.CloseHandle(snap)
	entry := windows.ThreadEntry32{Size: uint32(unsafe.Sizeof(windows.ThreadEntry32{}))}
	resumed := 0
	for err = windows.Thread32First(snap, &entry); err == nil; err = windows.Thread32Next(snap, &entry) {
		if entry.OwnerProcessID != uint32(pid) {
			continue
		}
		th, err := windows.OpenThread(windows.THREAD_SUSPEND_RESUME, false, entry.ThreadID)
		if err != nil {
			return fmt.Errorf("opening a thread of process %d: %w", pid, err)
		}
		_, err = windows.ResumeThread(th)
		_ = windows.CloseHandle(th)
		if err != nil {
			return fmt.Errorf("resuming process %d: %w", pid, err)
		}
		resumed++
	}
	if resumed == 0 {
		return fmt.Errorf("resuming process %d: no thread of it found", pid)
	}
	return nil
}

// Terminate ends every process in the job at once (TerminateJobObject,
// exit code 1): the Windows SIGKILL of the whole tree.
func (j *Job) Terminate() {
	if j == nil {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.h != 0 {
		_ = windows.TerminateJobObject(j.h, 1)
	}
}

// WaitEmpty waits up to limit until no process of the job is left
// running; it reports whether none is. A job whose count cannot be read
// is not known to be empty: it is polled again until limit, and then
// reported as not empty.
func (j *Job) WaitEmpty(limit time.Duration) bool {
	if j == nil {
		return true
	}
	deadline := time.Now().Add(limit)
	pause := time.Millisecond
	for {
		n, err := j.active()
		if err == nil && n == 0 {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pause) // a completion port would wake us; polling is bounded by limit
		pause = min(2*pause, 20*time.Millisecond)
	}
}

// active returns how many processes of the job run: 0 once the handle is
// closed (kill-on-close ended them), an error if the count cannot be read.
func (j *Job) active() (uint32, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.h == 0 {
		return 0, nil
	}
	var info jobAccounting
	if err := windows.QueryInformationJobObject(j.h, windows.JobObjectBasicAccountingInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)), nil); err != nil {
		return 0, fmt.Errorf("reading the job object's process count: %w", err)
	}
	return info.ActiveProcesses, nil
}

// jobAccounting is JOBOBJECT_BASIC_ACCOUNTING_INFORMATION, which
// golang.org/x/sys/windows does not define.
type jobAccounting struct {
	TotalUserTime             int64
	TotalKernelTime           int64
	ThisPeriodTotalUserTime   int64
	ThisPeriodTotalKernelTime int64
	TotalPageFaultCount       uint32
	TotalProcesses            uint32
	ActiveProcesses           uint32
	TotalTerminatedProcesses  uint32
}

// Close closes the job's handle; with kill-on-close, whatever still runs
// in it is terminated. Later calls do nothing.
func (j *Job) Close() {
	if j == nil {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.h != 0 {
		_ = windows.CloseHandle(j.h)
		j.h = 0
	}
}
