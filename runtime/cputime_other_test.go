//go:build !unix && !windows

package runtime

import "time"

// cpuTime is 0 where the process's CPU time is not read (neither Unix
// nor Windows): cpu-ns/op is then 0, not a wrong figure.
func cpuTime() time.Duration { return 0 }
