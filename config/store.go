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

// MaxFileSize is the largest configuration file Load and Save accept,
// 4 MiB: thousands of servers. A larger file is not read past the limit.
const MaxFileSize = 4 << 20

// ErrTooLarge is matched by the error of Save when the configuration would
// be larger than [MaxFileSize], and by the [ParseError] of a file on disk
// that is.
var ErrTooLarge = errors.New("configuration too large")

// Load reads and parses the file. A missing file is an empty configuration.
// A file that does not parse, or is larger than [MaxFileSize] (then also
// matching [ErrTooLarge]), yields a *ParseError (matching [ErrUnparsable])
// with the path and the cause, and no File. A symbolic link to a regular
// file is read through; one that points nowhere, into a loop or to a
// directory, and anything else that is not a regular file, is a read error
// saying what is there.
func (st Store) Load() (*File, error) {
	path, err := st.Path()
	if err != nil {
		return nil, err
	}
	data, err := read(path)
	var perr *ParseError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &File{}, nil
	case errors.As(err, &perr):
		return nil, err
	case err != nil:
		return nil, fmt.Errorf("loading configuration: %w", err)
	}
	f, err := Parse(data)
	if err != nil {
		return nil, &ParseError{Path: path, Err: err}
	}
	return f, nil
}

// read reads the file at path within MaxFileSize. A file over it is a
// *ParseError, so that the runtime starts without it and never replaces it
// (C2); what cannot be read at all (a directory, a symbolic link that
// points nowhere or into a loop) is a plain error, as before the limit.
func read(path string) ([]byte, error) {
	data, err := atomicfile.Read(path, MaxFileSize)
	if errors.Is(err, atomicfile.ErrTooLarge) {
		return nil, &ParseError{Path: path, Err: fmt.Errorf("%w: the file is over the %s limit", ErrTooLarge, atomicfile.Size(MaxFileSize)), unusable: true}
	}
	return data, err
}

// Save writes f to the file atomically, readable by the owner only. It
// creates the state dir (0700) if needed.
//
// Save refuses, with an error matching [ErrUnparsable], to replace a file
// that exists and does not parse: the user may be fixing it by hand, and it
// may hold credentials that exist nowhere else. Once the file parses again,
// saves go through.
//
// A configuration larger than [MaxFileSize] is refused ([ErrTooLarge]):
// Load would refuse it next time. When the file is a symbolic link, the
// file it points to is replaced and the link stays (a link that points
// nowhere, into a loop or not to a regular file is an error and nothing is
// written).
//
// The file is replaced by renaming a synced temporary file over it, so a
// crash leaves either the old or the new content. If Save fails, the old
// file is untouched and no temporary file is left behind, except when only
// the final directory sync fails: the new content is then in place but may
// not survive a power loss, and Save reports the error.
func (st Store) Save(f *File) error {
	_, err := st.SaveInfo(f)
	return err
}

// SaveInfo is Save that also returns the identity of the file it wrote,
// taken before it replaced the old one (see atomicfile.WriteInfo): an edit
// by hand right after the save is not taken for the save. The FileInfo is
// nil when nothing may have been written.
func (st Store) SaveInfo(f *File) (fs.FileInfo, error) {
	path, err := st.Path()
	if err != nil {
		return nil, err
	}
	data, err := Marshal(f)
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("saving the configuration: %w: it would be %d bytes, over the %s limit", ErrTooLarge, len(data), atomicfile.Size(MaxFileSize))
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("creating state dir: %w", err)
	}
	if err := checkOverwritable(path); err != nil {
		return nil, err
	}
	info, err := atomicfile.WriteInfo(path, data)
	if err != nil {
		return info, fmt.Errorf("saving %s: %w", path, err)
	}
	return info, nil
}

// checkOverwritable returns nil if path is absent or parses.
func checkOverwritable(path string) error {
	data, err := read(path)
	var perr *ParseError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case errors.As(err, &perr):
		perr.refused = true
		return perr
	case err != nil:
		// Unreadable (a directory, say): we cannot tell whether replacing
		// it loses data, so do not.
		return fmt.Errorf("checking %s before overwriting it: %w", path, err)
	}
	if _, err := Parse(data); err != nil {
		return &ParseError{Path: path, Err: err, refused: true}
	}
	return nil
}
