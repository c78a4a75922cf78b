package mcpconn

import (
	"errors"
	"io"
)

// stderrReadBytes is the buffer stderrWriter reads a server's stderr pipe
// with. os/exec would copy the pipe with a 32 KiB buffer of its own for
// every server, held as long as the server runs; stderr is seldom busy,
// and a flood is only read in more, smaller reads.
const stderrReadBytes = 2 << 10

// ReadFrom copies r into the writer in reads of stderrReadBytes: os/exec's
// io.Copy of the stderr pipe hands the copy to it (io.ReaderFrom) instead
// of allocating its own 32 KiB buffer.
func (w *stderrWriter) ReadFrom(r io.Reader) (int64, error) {
	buf := make([]byte, stderrReadBytes)
	var total int64
	for {
		n, err := r.Read(buf)
		if n > 0 {
			w.Write(buf[:n]) // it never fails
			total += int64(n)
		}
		if errors.Is(err, io.EOF) {
			return total, nil
		}
		if err != nil {
			// As io.Copy returns it: os/exec's Wait reports it (or
			// ErrWaitDelay) as it did before this method existed.
			return total, err
		}
	}
}
