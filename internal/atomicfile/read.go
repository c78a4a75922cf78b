package atomicfile

import (
	"fmt"
	"io"
	"os"
)

// Read returns the content of path, which must be a regular file (or a
// symbolic link to one) of at most limit bytes. It reads at most limit+1
// bytes whatever the file's size, and never blocks on a named pipe: the
// file is opened non-blocking and checked before the first read.
//
// A missing file yields an error matching fs.ErrNotExist; a dangling
// link, a link loop, a file that is not regular or is over the limit an
// error matching [ErrUnusable] (and [ErrTooLarge] for the last), which
// does not match fs.ErrNotExist: what is there is not ours to ignore.
func Read(path string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		if _, lerr := os.Lstat(path); lerr == nil {
			// Something is there (a dangling link or a loop): say what.
			if _, rerr := resolve(path); rerr != nil {
				return nil, rerr
			}
		}
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, unusable(path, "is not a regular file (%s)", kind(fi))
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &UnusableError{Path: path, Reason: "is larger than the limit of " + Size(limit), tooLarge: true}
	}
	return data, nil
}

// Size formats a byte count for messages: "4 MiB", "1536 bytes".
func Size(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
