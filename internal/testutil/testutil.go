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

	"github.com/openprogram/mcpvisor/internal/procs"
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
	return append(ProcessesWithEnv(MarkerEnv, value), zombieChildren()...)
}

// ProcessesWithEnv returns the pids of live processes (zombies not
// included: their environment reads empty) whose environment holds
// key=value.
func ProcessesWithEnv(key, value string) []int {
	needle := []byte(key + "=" + value + "\x00")
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
		env = append(append([]byte{0}, env...), 0)
		if bytes.Contains(env, append([]byte{0}, needle...)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// EnvOf returns the value of key in pid's environment, or "".
func EnvOf(pid int, key string) string { return procs.EnvOf(pid, key) }

// Cmdline returns pid's argv, or nil once it is gone.
func Cmdline(pid int) []string {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil || len(b) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
}

// zombieChildren returns exited children of this process that were never
// reaped.
func zombieChildren() []int { return ZombieChildrenOf(os.Getpid()) }

// ZombieChildrenOf returns exited children of parent that were never
// reaped.
func ZombieChildrenOf(parent int) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if state, ppid, _ := stat(pid); state == "Z" && ppid == parent {
			pids = append(pids, pid)
		}
	}
	return pids
}

// Alive reports whether pid exists and has not exited: a zombie (exited,
// waiting for its parent; an orphan's parent is init, which in some
// containers never reaps) is not alive.
func Alive(pid int) bool {
	state, _, _ := stat(pid)
	return state != "" && state != "Z"
}

// Kill kills process pid at once, as a crash would: SIGKILL on Unix,
// TerminateProcess on Windows.
func Kill(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	defer p.Release()
	return p.Kill()
}

// LiveInGroup returns the processes of group pgid that are alive.
func LiveInGroup(pgid int) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if state, _, pgrp := stat(pid); pgrp == pgid && state != "Z" {
			pids = append(pids, pid)
		}
	}
	return pids
}

// Parent returns pid's parent, or 0 once it is gone.
func Parent(pid int) int {
	_, ppid, _ := stat(pid)
	return ppid
}

// stat returns pid's state, parent and process group, or "" once it is
// gone.
func stat(pid int) (state string, ppid, pgrp int) {
	st, ppid, pgrp := procs.Stat(pid)
	if st == 0 {
		return "", 0, 0
	}
	return string(st), ppid, pgrp
}
