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

func dirStore(dir string) Store {
	return Store{Dir: func() (string, error) { return dir, nil }}
}

// entries lists the names in dir, to catch leftover temporary files.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, de := range des {
		names = append(names, de.Name())
	}
	return names
}

func TestPath(t *testing.T) {
	p, err := dirStore("/state").Path()
	if err != nil || p != filepath.Join("/state", FileName) {
		t.Errorf("Path = %q, %v", p, err)
	}
	failing := Store{Dir: func() (string, error) { return "", errors.New("no home") }}
	for name, st := range map[string]Store{"nil Dir": {}, "empty dir": dirStore(""), "Dir error": failing} {
		if _, err := st.Path(); err == nil {
			t.Errorf("%s: Path succeeded", name)
		}
		if _, err := st.Load(); err == nil {
			t.Errorf("%s: Load succeeded", name)
		}
		if err := st.Save(&File{}); err == nil {
			t.Errorf("%s: Save succeeded", name)
		}
	}
	if _, err := failing.Path(); err == nil || !strings.Contains(err.Error(), "no home") {
		t.Errorf("Dir's error not wrapped: %v", err)
	}
}

func TestDirResolvedOnEveryCall(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	dir := a
	st := Store{Dir: func() (string, error) { return dir, nil }}
	f := &File{}
	f.Put(localServer())
	if err := st.Save(f); err != nil {
		t.Fatal(err)
	}
	dir = b
	got, err := st.Load()
	if err != nil || len(got.Servers) != 0 {
		t.Errorf("Load after switching dirs = %v, %v; want the empty new dir", got, err)
	}
	dir = a
	if got, err := st.Load(); err != nil || len(got.Servers) != 1 {
		t.Errorf("Load after switching back = %v, %v", got, err)
	}
}

func TestLoadMissingAndEmpty(t *testing.T) {
	dir := t.TempDir()
	st := dirStore(dir)
	f, err := st.Load()
	if err != nil || f == nil || len(f.Servers) != 0 {
		t.Fatalf("missing file: Load = %v, %v; want empty File", f, err)
	}
	if err := os.WriteFile(filepath.Join(dir, FileName), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err = st.Load()
	if err != nil || f == nil || len(f.Servers) != 0 {
		t.Fatalf("empty file: Load = %v, %v; want empty File", f, err)
	}
	// A missing state dir is a missing file too.
	if f, err := dirStore(filepath.Join(dir, "nope", "deeper")).Load(); err != nil || len(f.Servers) != 0 {
		t.Errorf("missing dir: Load = %v, %v", f, err)
	}
}

func TestLoadUnparsable(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	if err := os.WriteFile(path, []byte(`{"servers": {"fs": `), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := dirStore(dir).Load()
	if f != nil || err == nil {
		t.Fatalf("Load = %v, %v; want nil and an error", f, err)
	}
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Path != path || pe.Err == nil {
		t.Errorf("error %v is not a *ParseError for %s", err, path)
	}
	if !errors.Is(err, ErrUnparsable) {
		t.Error("errors.Is(err, ErrUnparsable) = false")
	}
	if errors.Unwrap(err) != pe.Err {
		t.Error("ParseError does not unwrap to its cause")
	}
	if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "unexpected end") {
		t.Errorf("error %q lacks the path or the cause", err)
	}
}

func TestLoadReadError(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, FileName), 0o700); err != nil {
		t.Fatal(err)
	}
	_, err := dirStore(dir).Load()
	if err == nil || errors.Is(err, ErrUnparsable) {
		t.Errorf("Load of a directory = %v; want a read error, not ErrUnparsable", err)
	}
}

func TestSaveCreatesOwnerOnlyFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state", "nested")
	st := dirStore(dir)
	f := &File{}
	f.Put(remoteServer())
	f.Put(localServer())
	if err := st.Save(f); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(dir)
	if err != nil || info.Mode().Perm() != 0o700 {
		t.Errorf("state dir mode = %v, %v; want 0700", info.Mode().Perm(), err)
	}
	path := filepath.Join(dir, FileName)
	info, err = os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("file mode = %v, %v; want 0600", info.Mode().Perm(), err)
	}
	got, err := st.Load()
	if err != nil || !filesEqual(f, got) {
		t.Errorf("Load after Save = %v, %v", got, err)
	}
	want, _ := Marshal(f)
	if data, _ := os.ReadFile(path); !bytes.Equal(data, want) {
		t.Errorf("file content = %s, want %s", data, want)
	}
	if names := entries(t, dir); !slices.Equal(names, []string{FileName}) {
		t.Errorf("dir holds %v, want only %s", names, FileName)
	}
}

func TestSaveTightensOldMode(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	if err := os.WriteFile(path, []byte(`{"servers":{}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil { // umask may have narrowed it
		t.Fatal(err)
	}
	f := &File{}
	f.Put(localServer())
	if err := dirStore(dir).Save(f); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("mode after save = %v, %v; want 0600", info.Mode().Perm(), err)
	}
}

func TestSaveRefusesUnparsableFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	broken := []byte("{\"servers\": {\"fs\": {\"env\": {\"TOKEN\": \"" + envSecret + "\"}, }}\n")
	if err := os.WriteFile(path, broken, 0o644); err != nil {
		t.Fatal(err)
	}
	st := dirStore(dir)
	f := &File{}
	f.Put(remoteServer())
	err := st.Save(f)
	if err == nil {
		t.Fatal("Save overwrote an unparsable file")
	}
	if !errors.Is(err, ErrUnparsable) {
		t.Errorf("errors.Is(%v, ErrUnparsable) = false", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "refusing to overwrite "+path) || !strings.Contains(msg, "does not parse") {
		t.Errorf("unclear refusal: %q", msg)
	}
	assertNoSecret(t, "refusal", err.Error())
	data, rerr := os.ReadFile(path)
	if rerr != nil || !bytes.Equal(data, broken) {
		t.Errorf("unparsable file changed: %q", data)
	}
	if names := entries(t, dir); !slices.Equal(names, []string{FileName}) {
		t.Errorf("dir holds %v after refusal", names)
	}

	// Once the user fixes the file, saves go through again.
	if err := os.WriteFile(path, []byte(`{}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := st.Save(f); err != nil {
		t.Errorf("Save after the fix: %v", err)
	}
}

func TestSaveFailureLeavesNothing(t *testing.T) {
	root := t.TempDir()
	// The state dir's parent is a regular file: MkdirAll fails, as root too.
	blocker := filepath.Join(root, "blocker")
	if err := os.WriteFile(blocker, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	f := &File{}
	f.Put(localServer())
	if err := dirStore(filepath.Join(blocker, "state")).Save(f); err == nil {
		t.Error("Save under a regular file succeeded")
	}
	// The target is a directory: not readable as a config, so not replaced.
	dir := t.TempDir()
	target := filepath.Join(dir, FileName)
	if err := os.MkdirAll(filepath.Join(target, "keep"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := dirStore(dir).Save(f); err == nil {
		t.Error("Save over a directory succeeded")
	}
	if names := entries(t, dir); !slices.Equal(names, []string{FileName}) {
		t.Errorf("dir holds %v after a failed save", names)
	}
	// Marshal refuses the File: nothing is created at all.
	empty := t.TempDir()
	if err := dirStore(empty).Save(&File{Servers: []Server{{Name: "bad name"}}}); err == nil {
		t.Error("Save of an unmarshallable File succeeded")
	}
	if names := entries(t, empty); len(names) != 0 {
		t.Errorf("dir holds %v after a failed save", names)
	}
}
