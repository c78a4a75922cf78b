//go:build !unix

package procs

// Process groups are a Unix notion; elsewhere there is none to kill.
func killGroup(int) {}

func exists(int) bool { return false }
