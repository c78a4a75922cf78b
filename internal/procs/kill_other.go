//go:build !unix

package procs

import "syscall"

// Process groups are a Unix notion; elsewhere there is none to kill.
func killGroup(int) {}

func signalGroup(int, syscall.Signal) {}

func exists(int) bool { return false }
