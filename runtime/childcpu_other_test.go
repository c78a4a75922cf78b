//go:build !linux

package runtime

import (
	"errors"
	"time"
)

// childCPU reads another process's CPU time on Linux only (/proc); here
// the benchmarks report no server-cpu-ns/op.
func childCPU(int) (time.Duration, error) {
	return 0, errors.New("a child's CPU time is read on Linux only")
}

// childPIDs finds a process's children on Linux only (/proc).
func childPIDs(int) []int { return nil }
