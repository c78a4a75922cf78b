package catalog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// MaxFileBytes is the largest file the catalog reads: a JSON file is
// streamed, so only its server keys are held, but even a stream has to end.
const MaxFileBytes = 256 << 20

// MaxSettingsBytes is the largest JSONC, YAML or TOML file the catalog
// reads. Those formats are parsed whole, and the settings files that hold
// them are kilobytes; parsers build a file whole, at many times its size.
const MaxSettingsBytes = 1 << 20

// fileReader opens host files under the allowed roots.
type fileReader struct {
	roots []string // the home and project folders, symlinks resolved
	// content, when not nil, is the only file there is: every path a
	// reader opens reads it, and nothing is read from disk (ReadContent).
	content []byte
	served  []string // the paths content was served as
	// opened are the files read so far, symlinks resolved: a file is read
	// once, by the first reader that names it (see errReadAlready).
	opened map[string]bool
	// resolved, when not nil, runs between resolving a path and opening
	// it: a test's way to swap a symlink in there.
	resolved func(real string)
}

func newFileReader(opts Options) *fileReader {
	r := &fileReader{opened: map[string]bool{}}
	for _, dir := range append([]string{opts.Home}, opts.Projects...) {
		if dir == "" {
			continue
		}
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			r.roots = append(r.roots, real)
		}
	}
	return r
}

// errMissing reports a file that does not exist: no warning, it is the
// usual case of a host that is not installed.
var errMissing = errors.New("missing")

// errReadAlready reports a file read already in this listing, under
// another name: no warning, and its entries are listed once, as the
// first read found them. The readers read a host's user files before its
// project files, so a user file that is also a project's (a project
// folder that is the home directory: ~/.cursor/mcp.json, ~/.codex,
// ~/.gemini) keeps its user scope.
var errReadAlready = errors.New("read already")

// open opens path for reading if it is a regular file no larger than limit
// that resolves inside an allowed root. The error is meant for a warning:
// it names no file content.
func (r *fileReader) open(path string, limit int64) (io.ReadCloser, error) {
	if path == "" {
		return nil, errMissing
	}
	if r.content != nil {
		// Served even when refused: the warning names the content's label.
		r.served = append(r.served, path)
		if int64(len(r.content)) > limit {
			return nil, fmt.Errorf("it is %d bytes, over the limit of %d: not read", len(r.content), limit)
		}
		return io.NopCloser(bytes.NewReader(r.content)), nil
	}
	real, err := filepath.EvalSymlinks(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errMissing
	}
	if err != nil {
		return nil, fmt.Errorf("cannot resolve the path: %w", pathless(err))
	}
	root, rel, ok := r.inside(real)
	if !ok {
		return nil, errors.New("it resolves outside the home directory and the project folders: not read")
	}
	if r.opened[real] {
		return nil, errReadAlready
	}
	r.opened[real] = true
	if r.resolved != nil {
		r.resolved(real)
	}
	f, err := openIn(root, rel)
	if err != nil {
		return nil, err
	}
	// Stat the open file: what is read is what is checked.
	st, err := f.Stat()
	switch {
	case err != nil:
		err = fmt.Errorf("cannot stat it: %w", pathless(err))
	case !st.Mode().IsRegular():
		err = errors.New("it is not a regular file: not read")
	case st.Size() > limit:
		err = fmt.Errorf("it is %d bytes, over the limit of %d: not read", st.Size(), limit)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// readAll reads a whole settings file of at most limit bytes.
func (r *fileReader) readAll(path string, limit int64) ([]byte, error) {
	f, err := r.open(path, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("cannot read it: %w", pathless(err))
	}
	if int64(len(data)) > limit {
		return nil, grewError(limit)
	}
	return data, nil
}

// grewError is the warning for a file that passed its size check and grew
// over limit while read.
func grewError(limit int64) error {
	return fmt.Errorf("it grew over the limit of %d bytes while read: not read", limit)
}

// inside gives the allowed root that holds path, and path relative to it.
func (r *fileReader) inside(path string) (root, rel string, ok bool) {
	for _, root := range r.roots {
		if rel, err := filepath.Rel(root, path); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return root, rel, true
		}
	}
	return "", "", false
}

// openIn opens rel, a resolved path, within the folder root. Through an
// os.Root: a symlink swapped in after rel was resolved (for the file, or
// for a folder on its way) is followed only while it stays inside root,
// so what is opened is never outside it. Non-blocking: opening a FIFO
// swapped in would otherwise block until a writer comes; on a regular
// file the flag changes nothing.
func openIn(root, rel string) (*os.File, error) {
	dir, err := os.OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("cannot open its folder: %w", pathless(err))
	}
	defer dir.Close() // the file opened stays open
	f, err := dir.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("cannot open it within the home directory and the project folders: %w", pathless(err))
	}
	return f, nil
}

// pathless drops the path from an *fs.PathError: the warning names the
// file already.
func pathless(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
