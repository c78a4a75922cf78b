package runtime

import (
	"os"
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/status"
)

// Issue 10 review (L3): an edit by hand that keeps the file's inode, size
// and modification time (cp -p, touch -r, rsync -t, or two writes within
// one tick of the clock) is still seen by startup: a server it disables
// does not start.
func TestStartupSeesAnEditThatKeepsSizeAndMtime(t *testing.T) {
	first := exampleServer("first", "-hang-initialize")
	first.TimeoutSeconds = 2 // startup waits on it
	later := exampleServer("later")
	later.TimeoutSeconds = 10
	rt := start(t, Options{}, first, later)
	waitForProcesses(t, 1) // startup has read the file and waits on first

	path := rt.configPath()
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	later.Enabled, later.TimeoutSeconds = false, 9 // "false" is one byte longer, "9" one shorter
	edited := &config.File{}
	edited.Put(first)
	edited.Put(later)
	data, err := config.Marshal(edited)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(data)) != before.Size() {
		t.Fatalf("the edit is %d bytes, the file %d: the test would not test anything", len(data), before.Size())
	}
	if err := os.WriteFile(path, data, 0o600); err != nil { // in place: same inode
		t.Fatal(err)
	}
	if err := os.Chtimes(path, time.Time{}, before.ModTime()); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.Stat(path); !os.SameFile(before, after) || !after.ModTime().Equal(before.ModTime()) || after.Size() != before.Size() {
		t.Fatalf("the edit changed the file's identity (%v → %v): the test would not test anything", before.ModTime(), after.ModTime())
	}

	if st := rt.waitSettled(t, "later"); st.State != status.Disabled || st.PID != 0 {
		t.Fatalf("later = %s (pid %d) after the file disabled it, want disabled and no process", st.State, st.PID)
	}
}
