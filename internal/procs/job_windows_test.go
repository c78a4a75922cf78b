package procs

import (
	"os/exec"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/windows"
)

// Compiled and vetted by `make cross`, never run by the Linux CI (see the
// README's Platforms).

// A suspended process is adopted into a job and resumed; it runs in the
// job (which is not empty), and terminating the job ends it: the job is
// empty and the process exits.
func TestJobAdoptAndTerminate(t *testing.T) {
	cmd := exec.Command("cmd.exe", "/d", "/c", "ping -n 60 127.0.0.1 >NUL")
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.CREATE_SUSPENDED | windows.CREATE_NEW_PROCESS_GROUP}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	job, err := NewJob()
	if err != nil {
		_ = cmd.Process.Kill()
		<-done
		t.Fatal(err)
	}
	defer job.Close()
	if err := job.Adopt(cmd.Process.Pid); err != nil {
		_ = cmd.Process.Kill()
		<-done
		t.Fatal(err)
	}
	if n, err := job.active(); err != nil || n == 0 {
		t.Errorf("job after Adopt: %d active, %v; want the process", n, err)
	}
	if job.WaitEmpty(0) {
		t.Error("WaitEmpty reports an empty job while its process runs")
	}
	job.Terminate()
	if !job.WaitEmpty(30 * time.Second) {
		t.Error("the job is not empty after Terminate")
	}
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the adopted process did not exit after the job's Terminate")
	}
}

// The methods of a nil Job do nothing; a closed job reports empty and
// refuses to adopt.
func TestJobNilAndClosed(t *testing.T) {
	var nilJob *Job
	nilJob.Terminate()
	nilJob.Close()
	if !nilJob.WaitEmpty(time.Second) {
		t.Error("a nil Job is not empty")
	}
	job, err := NewJob()
	if err != nil {
		t.Fatal(err)
	}
	job.Close()
	job.Close()
	if !job.WaitEmpty(time.Second) {
		t.Error("a closed Job is not empty")
	}
	if err := job.Adopt(1); err == nil {
		t.Error("a closed Job adopted a process")
	}
}
