// Package atomicfile reads and writes files that hold secrets: written
// owner-only from the first byte and replaced atomically, so that a crash
// leaves either the old or the new content, never a mix; read with a bound,
// so that a huge file cannot take the memory of the process; and checked
// for being open to other users (ModeProblem), for a warning.
//
// A symbolic link is written through, never replaced: the new content goes
// to the file the link points to (the temporary file is made next to that
// target, so the rename stays within one file system), and the link stays a
// link, as dotfile managers expect. A link that points nowhere, into a loop
// or to something other than a regular file is an error, and nothing is
// written.
package atomicfile

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
)

// Write replaces path (or the target of the symbolic link path) with data
// through a temporary file in the same directory (a rename is atomic only
// within one file system).
func Write(path string, data []byte) error {
	_, err := WriteInfo(path, data)
	return err
}

// WriteInfo is Write that also returns the identity of the file it wrote:
// the temporary file's own FileInfo, taken before the rename, so that an
// edit made by someone else right after the rename is never taken for this
// write. (The rename itself changes the file's ctime: a comparison that
// includes ctime sees a difference once.) On an error after the rename
// (the directory sync), the FileInfo is still returned.
func WriteInfo(path string, data []byte) (info fs.FileInfo, err error) {
	path, err = resolve(path)
	if err != nil {
		return nil, err
	}
	dir := filepath.Dir(path)
	// CreateTemp opens with O_CREATE|O_EXCL and mode 0600 in one call, so
	// the content is never readable by others, not even briefly; the rename
	// then gives the target that mode, whatever it had before.
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return nil, fmt.Errorf("creating temporary file: %w", err)
	}
	renamed := false
	defer func() {
		if err != nil && !renamed {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return nil, fmt.Errorf("writing temporary file: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		return nil, fmt.Errorf("syncing temporary file: %w", err)
	}
	if info, err = tmp.Stat(); err != nil {
		return nil, fmt.Errorf("checking temporary file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return nil, fmt.Errorf("closing temporary file: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return nil, fmt.Errorf("replacing the file: %w", err)
	}
	renamed = true
	if err := syncDir(dir); err != nil {
		return info, fmt.Errorf("syncing directory (the file is replaced, but may not survive a crash): %w", err)
	}
	return info, nil
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil // Windows cannot open a directory for syncing
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
