package runtime

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"time"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/PID/stat:
// 100 on every Linux architecture Go supports (sysconf(_SC_CLK_TCK)).
const clockTicks = 100

// childCPU is the user+system CPU process pid has used so far, from
// /proc/pid/stat (its own, not its children's), to 10 ms.
func childCPU(pid int) (time.Duration, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("reading the stat of process %d: %w", pid, err)
	}
	// The command name (field 2) is in parentheses and may hold spaces:
	// the fields after its closing parenthesis start at field 3 (state).
	i := bytes.LastIndexByte(raw, ')')
	if i < 0 {
		return 0, fmt.Errorf("the stat of process %d has no command name", pid)
	}
	f := bytes.Fields(raw[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("the stat of process %d has %d fields after its name", pid, len(f))
	}
	var ticks int64
	for _, field := range f[11:13] { // utime (field 14) and stime (15)
		n, err := strconv.ParseInt(string(field), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("the stat of process %d: %w", pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}
