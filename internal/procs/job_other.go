//go:build !windows

package procs

import "time"

// Job is a Windows Job Object (job_windows.go); elsewhere the process
// group is the server's tree, and a Job is never made: the methods of the
// nil Job do nothing.
type Job struct{}

// Terminate does nothing: there is no job.
func (*Job) Terminate() {}

// WaitEmpty reports true at once: there is no job.
func (*Job) WaitEmpty(time.Duration) bool { return true }

// Close does nothing: there is no job.
func (*Job) Close() {}
