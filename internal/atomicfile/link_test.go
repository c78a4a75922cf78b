//go:build unix

package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// TestWriteThroughSymlink: a link is written through: the target holds the
// new content, owner-only, the link is still a link to it, and the
// temporary file was made next to the target (nothing is left in either
// directory).
func TestWriteThroughSymlink(t *testing.T) {
	linkDir, targetDir := t.TempDir(), t.TempDir()
	target := filepath.Join(targetDir, "real.json")
	if err := os.WriteFile(target, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(linkDir, "f.json")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := Write(link, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if dest, err := os.Readlink(link); err != nil || dest != target {
		t.Fatalf("link = %q, %v; want still a link to %s", dest, err, target)
	}
	fi, err := os.Stat(target)
	if err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(target); string(data) != "new" || fi.Mode().Perm() != 0o600 {
		t.Errorf("target = %q mode %v, want new, 0600", data, fi.Mode().Perm())
	}
	if got := names(t, targetDir); !slices.Equal(got, []string{"real.json"}) {
		t.Errorf("target dir = %v", got)
	}
	if got := names(t, linkDir); !slices.Equal(got, []string{"f.json"}) {
		t.Errorf("link dir = %v", got)
	}
}

// TestWriteRelativeSymlinkChain: a relative link to a link is followed to
// the end of the chain.
func TestWriteRelativeSymlinkChain(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(dir, "sub", "real.json")
	if err := os.WriteFile(real, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	mustSymlink(t, "sub/real.json", filepath.Join(dir, "mid.json"))
	mustSymlink(t, "mid.json", filepath.Join(dir, "f.json"))
	if err := Write(filepath.Join(dir, "f.json"), []byte("new")); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(real); string(data) != "new" {
		t.Errorf("target = %q", data)
	}
	for _, l := range []string{"mid.json", "f.json"} {
		if fi, err := os.Lstat(filepath.Join(dir, l)); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("%s is no longer a link", l)
		}
	}
}

func mustSymlink(t *testing.T, dest, link string) {
	t.Helper()
	if err := os.Symlink(dest, link); err != nil {
		t.Fatal(err)
	}
}

// TestBadLinksRefused: a dangling link, a loop, a link to a directory and a
// named pipe are refused by Write and Read with an error saying what is
// there (Read does not block on the pipe), and nothing changes on disk.
func TestBadLinksRefused(t *testing.T) {
	dir := t.TempDir()
	mustSymlink(t, filepath.Join(dir, "nowhere.json"), filepath.Join(dir, "dangling"))
	mustSymlink(t, "loop-b", filepath.Join(dir, "loop-a"))
	mustSymlink(t, "loop-a", filepath.Join(dir, "loop-b"))
	if err := os.Mkdir(filepath.Join(dir, "d"), 0o700); err != nil {
		t.Fatal(err)
	}
	mustSymlink(t, "d", filepath.Join(dir, "todir"))
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, says string }{
		{"dangling", "does not exist"},
		{"loop-a", "cannot be followed"},
		{"todir", "a directory"},
		{"fifo", "a named pipe"},
	}
	before := names(t, dir)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, tt.name)
			for what, err := range map[string]error{
				"Write": Write(path, []byte("new")),
				"Read":  func() error { _, err := Read(path, 1<<20); return err }(),
			} {
				if !errors.Is(err, ErrUnusable) || errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), tt.says) {
					t.Errorf("%s: error %v, want ErrUnusable saying %q", what, err, tt.says)
				}
			}
		})
	}
	if _, err := Read(filepath.Join(dir, "d"), 1<<20); !errors.Is(err, ErrUnusable) || !strings.Contains(err.Error(), "a directory") {
		t.Errorf("Read(dir) = %v, want ErrUnusable", err)
	}
	if got := names(t, dir); !slices.Equal(got, before) {
		t.Errorf("dir = %v, was %v", got, before)
	}
	if ents, _ := os.ReadDir(filepath.Join(dir, "d")); len(ents) != 0 {
		t.Errorf("something was written into the linked directory: %v", ents)
	}
}

// TestReadBounded: a file over the limit is refused after reading at most
// limit+1 bytes: a sparse 64 GiB file would otherwise take the memory of
// the test. A file at the limit reads whole; a missing one matches
// fs.ErrNotExist.
func TestReadBounded(t *testing.T) {
	dir := t.TempDir()
	huge := filepath.Join(dir, "huge")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(64 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = Read(huge, 4<<20)
	if !errors.Is(err, ErrTooLarge) || !errors.Is(err, ErrUnusable) || !strings.Contains(err.Error(), "4 MiB") {
		t.Fatalf("Read(huge) = %v, want ErrTooLarge naming the limit", err)
	}
	exact := filepath.Join(dir, "exact")
	if err := os.WriteFile(exact, []byte("12345"), 0o600); err != nil {
		t.Fatal(err)
	}
	if data, err := Read(exact, 5); err != nil || string(data) != "12345" {
		t.Errorf("Read(at the limit) = %q, %v", data, err)
	}
	if _, err := Read(exact, 4); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Read(one over) = %v, want ErrTooLarge", err)
	}
	if _, err := Read(filepath.Join(dir, "missing"), 5); !errors.Is(err, fs.ErrNotExist) || errors.Is(err, ErrUnusable) {
		t.Errorf("Read(missing) = %v, want fs.ErrNotExist", err)
	}
}

// TestRemoveThroughSymlink: removing a link removes its target too (the
// record is the target; the link alone would leave the secret behind);
// a dangling link is removed as a name.
func TestRemoveThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real.json")
	if err := os.WriteFile(target, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	mustSymlink(t, target, filepath.Join(dir, "f.json"))
	mustSymlink(t, "nowhere", filepath.Join(dir, "dangling"))
	for _, n := range []string{"f.json", "dangling", "missing"} {
		if err := Remove(filepath.Join(dir, n)); err != nil {
			t.Errorf("Remove(%s) = %v", n, err)
		}
	}
	if got := names(t, dir); len(got) != 0 {
		t.Errorf("left: %v", got)
	}
}
