package runtime

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openprogram/mcpvisor/status"
)

// cwd is the process's working directory (its /proc link) and its $PWD,
// both the configured directory; one that does not exist fails the server
// as an invalid config naming the field and the path, without a retry.
func TestCwd(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	in := exampleServer("in")
	in.Cwd = dir
	missing := exampleServer("missing")
	missing.Cwd = filepath.Join(dir, "no-such-dir")
	file := exampleServer("file")
	file.Cwd = filepath.Join(dir, "plain")
	if err := os.WriteFile(file.Cwd, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	rt := start(t, Options{}, in, missing, file)
	st := rt.waitReady(t, "in")
	if got, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", st.PID)); err != nil || got != dir {
		t.Errorf("the process runs in %q (%v), want %q", got, err, dir)
	}
	if got := mustCall(t, rt, "in__env", map[string]any{"name": "PWD"}).Content[0].Text; got != dir {
		t.Errorf("PWD = %q, want %q", got, dir)
	}
	for name, want := range map[string]string{"missing": "does not exist", "file": "is not a directory"} {
		st := rt.waitSettled(t, name)
		if st.State != status.Failed || st.ErrorKind != status.KindInvalidConfig || !strings.Contains(st.Error, "cwd") ||
			!strings.Contains(st.Error, want) || st.NextRetryAt != nil {
			t.Errorf("%s = %+v, want failed/invalid_config on cwd (%s)", name, st, want)
		}
	}
	api := newAPI(t, rt)
	if d := api.entry("in"); d.Cwd != dir {
		t.Errorf("GET cwd = %q", d.Cwd)
	}
	// Patched to an existing directory, the server comes up there.
	api.do("PATCH", "/api/mcp/servers/missing", fmt.Sprintf(`{"cwd": %q}`, dir)).want(t, http.StatusOK)
	st = rt.waitReady(t, "missing")
	if got, _ := os.Readlink(fmt.Sprintf("/proc/%d/cwd", st.PID)); got != dir {
		t.Errorf("after PATCH the process runs in %q", got)
	}
	if !strings.Contains(string(readConfig(t, rt)), fmt.Sprintf(`"cwd": %q`, dir)) {
		t.Errorf("the PATCHed cwd is not in the file")
	}
}
