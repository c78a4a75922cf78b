package exampleserver

import (
	"io"
	"sync"
)

// lockedWriter serialises writes so that lines written by concurrent tool
// calls and by Run never interleave, whatever Writer the caller passed.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

// writeLine writes s followed by a newline in a single Write.
func (l *lockedWriter) writeLine(s string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, err := io.WriteString(l.w, s+"\n")
	return err
}
