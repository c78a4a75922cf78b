package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/openprogram/mcpvisor/internal/atomicfile"
)

// Store is the configuration file on disk, <Dir()>/mcp_servers.json.
//
// A Store holds no state besides Dir, and each method resolves the
// directory anew, so a host that switches profiles, or a test that
// redirects the state dir, is followed without building a new Store.
// Concurrent Saves are not coordinated: the manager, the only writer,
// serialises them.
type Store struct {
	// Dir returns the state directory. It is called on every Path, Load and
	// Save, never cached.
	Dir func() (string, error)
}

// Path returns the path of the configuration file.
func (st Store) Path() (string, error) {
	if st.Dir == nil {
		return "", errors.New("resolving state dir: Store.Dir is nil")
	}
	dir, err := st.Dir()
	if err != nil {
		return "", fmt.Errorf("resolving state dir: %w", err)
	}
	if dir == "" {
		return "", errors.New("resolving state dir: empty path")
	}
	return filepath.Join(dir, FileName), nil
}

// Load reads and parses the file. A missing file is an empty configuration.
// A file that does not parse yields a *ParseError (matching
// [ErrUnparsable]) with the path and the cause, and no File.
func (st Store) Load() (*File, error) {
	path, err := st.Path()
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &File{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("loading configuration: %w", err)
	}
	f, err := Parse(data)
	if err != nil {
		return nil, &ParseError{Path: path, Err: err}
	}
	return f, nil
}

// Save writes f to the file atomically, readable by the owner only. It
// creates the state dir (0700) if needed.
//
// Save refuses, with an error matching [ErrUnparsable], to replace a file
// that exists and does not parse: the user may be fixing it by hand, and it
// may hold credentials that exist nowhere else. Once the file parses again,
// saves go through.
//
// The file is replaced by renaming a synced temporary file over it, so a
// crash leaves either the old or the new content. If Save fails, the old
// file is untouched and no temporary file is left behind, except when only
// the final directory sync fails: the new content is then in place but may
// not survive a power loss, and Save reports the error.
func (st Store) Save(f *File) error {
	path, err := st.Path()
	if err != nil {
		return err
	}
	data, err := Marshal(f)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("creating state dir: %w", err)
	}
	if err := checkOverwritable(path); err != nil {
		return err
	}
	if err := atomicfile.Write(path, data); err != nil {
		return fmt.Errorf("saving %s: %w", path, err)
	}
	return nil
}

// checkOverwritable returns nil if path is absent or parses.
func checkOverwritable(path string) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		// Unreadable (a directory, say): we cannot tell whether replacing
		// it loses data, so do not.
		return fmt.Errorf("checking %s before overwriting it: %w", path, err)
	}
	if _, err := Parse(data); err != nil {
		return &ParseError{Path: path, Err: err, refused: true}
	}
	return nil
}
