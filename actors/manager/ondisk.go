package manager

import (
	"errors"
	"io/fs"
	"os"
	"time"

	"github.com/openprogram/mcpvisor/config"
)

// onDisk is the manager's view of the config file as it is on disk, so
// that a startup turn costs a stat, not a read and parse of the whole file
// (with thousands of entries that made startup quadratic).
//
// The view is refreshed when the file's identity changed since it was
// read: another inode (an atomic save, ours or an editor's), another size,
// modification time or change time (ctime: no user tool can set it back,
// so an edit that keeps size and mtime, such as cp -p, touch -r or rsync
// -t, is seen too). A file whose mtime or ctime is within racyWindow of
// when it was read may have changed again within the same tick of the
// file system's clock: it is not trusted, and is read again (the rule git
// uses for its index) at most once per racyRecheck until it has aged — so
// a change costs a read or two, and a timestamp in the future (a clock
// stepped back, cp -p from a machine that was ahead), which stays "racy"
// for good, costs one read a second, not one per turn. Saves go through
// the manager, which records the identity of the file it wrote (taken
// before the rename: a hand edit right after it is never taken for the
// save).
type onDisk struct {
	file   *config.File // nil: unknown, or the file does not parse
	err    error        // why file is nil
	info   fs.FileInfo  // identity of what file was read from; nil: no file
	readAt time.Time    // when it was read (or written)
	doneAt time.Time    // when that read ended
	read   bool         // file/err/info hold a read
}

// racyWindow covers the coarsest timestamp tick of the usual file
// systems' clocks (a kernel tick; whole seconds on some).
const racyWindow = time.Second

// racyRecheck is how long after the end of a read a racy file is read
// again: an edit within the tick of the last read is seen at most this
// late, and a file that stays racy costs at most one read per interval
// however long a read takes.
const racyRecheck = racyWindow

// current returns the file as it is on disk now, reading it only if it
// changed since the last read or write.
func (a *Actor) current() (*config.File, error) {
	info, statErr := a.statFile()
	if a.disk.read && statErr == nil && sameFile(a.disk.info, info) &&
		(!racy(a.disk.info, a.disk.readAt) || time.Since(a.disk.doneAt) < racyRecheck) {
		return a.disk.file, a.disk.err
	}
	readAt := time.Now()
	f, err := a.load()
	a.disk = onDisk{file: f, err: err, info: info, readAt: readAt, doneAt: time.Now(), read: true}
	return f, err
}

// wrote records f as what the file holds now: the manager just saved it,
// and info is the identity of the file it wrote.
func (a *Actor) wrote(f *config.File, info fs.FileInfo) {
	if info == nil {
		a.disk = onDisk{}
		return
	}
	now := time.Now()
	a.disk = onDisk{file: f.Clone(), info: info, readAt: now, doneAt: now, read: true}
}

// racy reports whether the file info describes may have changed again,
// unseen, within the tick in which it was read at readAt.
func racy(info fs.FileInfo, readAt time.Time) bool {
	if info == nil {
		return false
	}
	return readAt.Sub(info.ModTime()) < racyWindow || readAt.Sub(changeTime(info)) < racyWindow
}

// forget drops the view, so the next turn reads the file.
func (a *Actor) forget() { a.disk = onDisk{} }

// statFile stats the config file; a missing file has a nil info.
func (a *Actor) statFile() (fs.FileInfo, error) {
	path, err := a.Store.Path()
	if err != nil {
		return nil, err
	}
	info, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return info, err
}

func sameFile(x, y fs.FileInfo) bool {
	if x == nil || y == nil {
		return x == nil && y == nil
	}
	return os.SameFile(x, y) && x.Size() == y.Size() && x.ModTime().Equal(y.ModTime()) &&
		changeTime(x).Equal(changeTime(y))
}

// positions indexes the servers of one File by name, so that a startup
// turn finds its entry in O(1) (File.Get scans). It is valid for the File
// it was built from until that File's list changes: reset it then.
type positions struct {
	of *config.File
	at map[string]int
}

// get returns a copy of the server called name in f.
func (p *positions) get(f *config.File, name string) (config.Server, bool) {
	if f == nil {
		return config.Server{}, false
	}
	if p.of != f {
		p.of, p.at = f, make(map[string]int, len(f.Servers))
		for i, s := range f.Servers {
			if _, dup := p.at[s.Name]; !dup {
				p.at[s.Name] = i
			}
		}
	}
	i, ok := p.at[name]
	if !ok || i >= len(f.Servers) || f.Servers[i].Name != name {
		return config.Server{}, false
	}
	return f.Servers[i].Clone(), true
}
