package mcpconn

import (
	"os/exec"
	"testing"

	"golang.org/x/sys/windows"
)

// Compiled and vetted by `make cross`, never run by the Linux CI.

// A server starts suspended (to be adopted by its job before it runs), in
// its own process group, and with no console window of its own.
func TestOwnTreeFlags(t *testing.T) {
	cmd := exec.Command("cmd.exe", "/d", "/c", "exit 0")
	ownTree(cmd)
	for _, f := range []uint32{windows.CREATE_SUSPENDED, windows.CREATE_NEW_PROCESS_GROUP, windows.CREATE_NO_WINDOW} {
		if cmd.SysProcAttr == nil || cmd.SysProcAttr.CreationFlags&f == 0 {
			t.Errorf("CreationFlags %#x lack %#x", cmd.SysProcAttr.CreationFlags, f)
		}
	}
}
