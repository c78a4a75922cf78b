package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestWriteIsOwnerOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.json")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, []byte("new")); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", st.Mode().Perm())
	}
	if data, _ := os.ReadFile(path); string(data) != "new" {
		t.Errorf("content %q, want new", data)
	}
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

// TestWriteRenameFailure forces the last step to fail after the
// temporary file was written: it must be removed and the target untouched.
func TestWriteRenameFailure(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "f.json")
	keep := filepath.Join(target, "keep")
	if err := os.MkdirAll(target, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keep, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := Write(target, []byte(`{"servers":{}}`))
	if err == nil {
		t.Fatal("rename over a non-empty directory succeeded")
	}
	if !strings.Contains(err.Error(), "replacing") {
		t.Errorf("error %q does not say which step failed", err)
	}
	if names := names(t, dir); !slices.Equal(names, []string{"f.json"}) {
		t.Errorf("temporary file left behind: %v", names)
	}
	if data, err := os.ReadFile(keep); err != nil || string(data) != "old" {
		t.Errorf("target changed: %q, %v", data, err)
	}
}

func TestWriteCreateFailure(t *testing.T) {
	err := Write(filepath.Join(t.TempDir(), "missing", "f.json"), []byte("{}"))
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Write into a missing dir = %v, want a wrapped ErrNotExist", err)
	}
}
