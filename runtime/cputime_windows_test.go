package runtime

import (
	"time"

	"golang.org/x/sys/windows"
)

// cpuTime is the user+system CPU this process has used (GetProcessTimes;
// 0 if it fails, which makes cpu-ns/op 0 rather than wrong).
func cpuTime() time.Duration {
	var creation, exit, kernel, user windows.Filetime
	if err := windows.GetProcessTimes(windows.CurrentProcess(), &creation, &exit, &kernel, &user); err != nil {
		return 0
	}
	// A Filetime counts 100 ns intervals.
	ticks := func(f windows.Filetime) int64 { return int64(f.HighDateTime)<<32 | int64(f.LowDateTime) }
	return time.Duration((ticks(kernel) + ticks(user)) * 100)
}
