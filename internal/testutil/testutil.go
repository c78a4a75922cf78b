// Package testutil builds the demo binary for tests that need a real
// example server subprocess, and finds processes a test left behind.
package testutil

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// MarkerEnv is the environment variable tests put into every server they
// configure, so that leftovers can be found even after they were reparented.
const MarkerEnv = "MCPVISOR_TEST_MARKER"

// BuildDemo builds cmd/demo into dir and returns the binary's path. Call it
// from TestMain; it runs the go command of the test's toolchain.
func BuildDemo(dir string) (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "demo")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/demo")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building demo: %v\n%s", err, out)
	}
	return bin, nil
}

func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("finding the module: %w", err)
	}
	return filepath.Dir(strings.TrimSpace(string(out))), nil
}

// ProcessesWithMarker returns the pids of live processes whose environment
// holds MarkerEnv=value. Zombies count: a zombie is a process nobody reaped.
func ProcessesWithMarker(value string) []int {
	needle := []byte(MarkerEnv + "=" + value + "\x00")
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			// A zombie's environ reads empty; find zombies by parent below.
			continue
		}
		if bytes.Contains(append(env, 0), needle) {
			pids = append(pids, pid)
		}
	}
	return append(pids, zombieChildren()...)
}

// zombieChildren returns exited children of this process that were never
// reaped.
func zombieChildren() []int {
	entries, _ := os.ReadDir("/proc")
	me := strconv.Itoa(os.Getpid())
	var pids []int
	for _, e := range entries {
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may hold spaces, so cut at the last ')'.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) >= 2 && f[0] == "Z" && f[1] == me {
			pid, _ := strconv.Atoi(e.Name())
			pids = append(pids, pid)
		}
	}
	return pids
}
