//go:build unix

package config

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writeHuge writes a config file of size bytes that would parse if it
// were read: a server whose env holds one long value.
func writeHuge(t *testing.T, path string, size int) []byte {
	t.Helper()
	head := `{"servers":{"fs":{"type":"local","command":["x"],"env":{"A":"`
	tail := `"}}}}`
	data := []byte(head + strings.Repeat("a", size-len(head)-len(tail)) + tail)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return data
}

// TestLoadTooLarge: a 5 MiB file is refused as unparsable (the runtime
// then starts without it) naming the limit, and Save never replaces it.
func TestLoadTooLarge(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	huge := writeHuge(t, path, 5<<20)
	st := dirStore(dir)
	f, err := st.Load()
	if f != nil || !errors.Is(err, ErrUnparsable) || !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "4 MiB") {
		t.Fatalf("Load = %v, %v; want ErrUnparsable and ErrTooLarge naming 4 MiB", f, err)
	}
	err = st.Save(&File{})
	if !errors.Is(err, ErrUnparsable) || !strings.Contains(err.Error(), "refusing to overwrite") {
		t.Fatalf("Save over the huge file = %v, want a refusal", err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, huge) {
		t.Error("the huge file changed")
	}
	// Exactly at the limit still loads.
	writeHuge(t, path, MaxFileSize)
	if _, err := st.Load(); err != nil {
		t.Errorf("Load at the limit = %v", err)
	}
}

// TestSaveTooLarge: Save refuses to write a configuration that Load would
// refuse, and the file on disk stays as it was.
func TestSaveTooLarge(t *testing.T) {
	dir := t.TempDir()
	st := dirStore(dir)
	small := &File{}
	small.Put(localServer())
	if err := st.Save(small); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(dir, FileName))
	big := small.Clone()
	s := localServer()
	s.Name = "big"
	s.Env = map[string]string{"A": strings.Repeat("a", MaxFileSize)}
	big.Put(s)
	if err := st.Save(big); !errors.Is(err, ErrTooLarge) || errors.Is(err, ErrUnparsable) {
		t.Fatalf("Save = %v, want ErrTooLarge", err)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, FileName)); !bytes.Equal(after, before) {
		t.Error("the file changed")
	}
}

// TestSaveThroughSymlink: a config file that is a symbolic link (a dotfile
// manager's) is read through, and a save replaces its target atomically,
// owner-only, and leaves the link a link.
func TestSaveThroughSymlink(t *testing.T) {
	dir, dotfiles := t.TempDir(), t.TempDir()
	target := filepath.Join(dotfiles, "mcp.json")
	if err := os.WriteFile(target, []byte(`{"servers":{}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, FileName)
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	st := dirStore(dir)
	f, err := st.Load()
	if err != nil {
		t.Fatal(err)
	}
	f.Put(localServer())
	if err := st.Save(f); err != nil {
		t.Fatal(err)
	}
	if dest, err := os.Readlink(link); err != nil || dest != target {
		t.Fatalf("link = %q, %v; want still a link to %s", dest, err, target)
	}
	fi, err := os.Stat(target)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("target: %v, %v; want mode 0600", fi, err)
	}
	got, err := st.Load()
	if err != nil || len(got.Servers) != 1 || !got.Servers[0].Equal(localServer()) {
		t.Fatalf("reloaded %+v, %v", got, err)
	}
	if names := entries(t, dotfiles); !slices.Equal(names, []string{"mcp.json"}) {
		t.Errorf("dotfiles dir = %v, want no temporary file", names)
	}
}

// TestBadSymlinkConfig: a dangling link, a link loop and a link to a
// directory are clear errors for Load and Save, and nothing is written.
func TestBadSymlinkConfig(t *testing.T) {
	tests := []struct {
		name string
		make func(t *testing.T, dir, link string)
		says string
	}{
		{"dangling", func(t *testing.T, dir, link string) {
			mustLink(t, filepath.Join(dir, "gone.json"), link)
		}, "does not exist"},
		{"loop", func(t *testing.T, dir, link string) {
			mustLink(t, filepath.Join(dir, "other"), link)
			mustLink(t, link, filepath.Join(dir, "other"))
		}, "symbolic link"},
		{"to a directory", func(t *testing.T, dir, link string) {
			if err := os.Mkdir(filepath.Join(dir, "d"), 0o700); err != nil {
				t.Fatal(err)
			}
			mustLink(t, filepath.Join(dir, "d"), link)
		}, "directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			link := filepath.Join(dir, FileName)
			tt.make(t, dir, link)
			before := entries(t, dir)
			st := dirStore(dir)
			if _, err := st.Load(); err == nil || errors.Is(err, ErrUnparsable) || !strings.Contains(err.Error(), tt.says) {
				t.Errorf("Load = %v, want a read error saying %q", err, tt.says)
			}
			f := &File{}
			f.Put(localServer())
			if err := st.Save(f); err == nil || !strings.Contains(err.Error(), tt.says) {
				t.Errorf("Save = %v, want an error saying %q", err, tt.says)
			}
			if after := entries(t, dir); !slices.Equal(after, before) {
				t.Errorf("dir = %v, was %v", after, before)
			}
			if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
				t.Errorf("the link was replaced: %v, %v", fi, err)
			}
		})
	}
}

func mustLink(t *testing.T, dest, link string) {
	t.Helper()
	if err := os.Symlink(dest, link); err != nil {
		t.Fatal(err)
	}
}
