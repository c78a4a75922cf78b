package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrUnusable is matched by every error about what is at a path rather
// than about reading or writing it: a file over the caller's limit
// ([ErrTooLarge] too), something other than a regular file (a directory,
// a FIFO, a device), a symbolic link that points nowhere or into a loop.
// Retrying does not help; the user has to fix the file.
var ErrUnusable = errors.New("file cannot be used")

// ErrTooLarge is matched by the error of [Read] for a file over its limit.
var ErrTooLarge = errors.New("file too large")

// UnusableError is an [ErrUnusable]: Path is what is there, Reason what
// is wrong with it ("is a symbolic link to ..., which does not exist").
// One over the limit of [Read] also matches [ErrTooLarge].
type UnusableError struct {
	Path, Reason string
	tooLarge     bool
}

func (e *UnusableError) Error() string { return e.Path + " " + e.Reason }

// Is matches ErrUnusable, and ErrTooLarge for a file over the limit.
func (e *UnusableError) Is(target error) bool {
	return target == ErrUnusable || (e.tooLarge && target == ErrTooLarge)
}

func unusable(path, format string, args ...any) error {
	return &UnusableError{Path: path, Reason: fmt.Sprintf(format, args...)}
}

// resolve returns the file that path names: path itself, or the final
// target when path is a symbolic link. A missing path (not a dangling link)
// is returned as is, with no error, for the caller to create. A link to
// anything but a regular file is refused, and so is a named pipe, socket
// or device at path: replacing it by a file would lose what the user put
// there (renaming over a directory fails by itself).
func resolve(path string) (string, error) {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return path, nil
	case err != nil:
		return "", err
	case fi.Mode()&fs.ModeSymlink == 0:
		// (A directory is left to the rename, which fails on it.)
		if !fi.Mode().IsRegular() && !fi.IsDir() {
			return "", unusable(path, "is not a regular file (%s)", kind(fi))
		}
		return path, nil
	}
	target, err := filepath.EvalSymlinks(path)
	if errors.Is(err, fs.ErrNotExist) {
		dest, _ := os.Readlink(path)
		return "", unusable(path, "is a symbolic link to %q, which does not exist", dest)
	}
	if err != nil {
		// EvalSymlinks says "too many links" for a loop.
		return "", unusable(path, "is a symbolic link that cannot be followed (a loop?): %v", err)
	}
	fi, err = os.Stat(target)
	if err != nil {
		return "", fmt.Errorf("following symbolic link %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return "", unusable(path, "is a symbolic link to %s, which is not a regular file (%s)", target, kind(fi))
	}
	return target, nil
}

func kind(fi fs.FileInfo) string {
	switch m := fi.Mode(); {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	default:
		return "mode " + m.String()
	}
}

// Remove deletes path. When path is a symbolic link, the file it points to
// is deleted first, then the link: the record lives in the target, and
// removing only the link would leave the secret behind. A missing path is
// no error.
func Remove(path string) error {
	target, err := resolve(path)
	switch {
	case errors.Is(err, ErrUnusable):
		// Nothing readable to delete behind it (a dangling link, say):
		// remove the name only.
		target = path
	case err != nil:
		return err
	}
	if target != path {
		if err := os.Remove(target); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("removing the target of symbolic link %s: %w", path, err)
		}
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
