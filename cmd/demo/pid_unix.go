//go:build unix

package main

import "syscall"

// killProcess SIGKILLs pid, the way a crash ends a process.
func killProcess(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }

// processExists reports whether pid is a process (a zombie counts).
func processExists(pid int) bool { return syscall.Kill(pid, 0) == nil }
