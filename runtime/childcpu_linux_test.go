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

// childPIDs is the live children of process pid, from the parent field
// of every /proc/PID/stat (a gateway's upstream servers).
func childPIDs(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		i := bytes.LastIndexByte(raw, ')')
		if i < 0 {
			continue
		}
		// After the name: state (field 3), then the parent (4).
		if f := bytes.Fields(raw[i+1:]); len(f) > 1 && string(f[1]) == strconv.Itoa(pid) {
			pids = append(pids, child)
		}
	}
	return pids
}
