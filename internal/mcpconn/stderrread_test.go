package mcpconn

import (
	"errors"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

// TestStderrReadFrom: io.Copy from a pipe (as os/exec copies a server's
// stderr) goes through ReadFrom in small reads, and the lines come out
// whole, a line longer than one read included; a read error other than
// EOF is returned as it came.
func TestStderrReadFrom(t *testing.T) {
	long := strings.Repeat("x", stderrReadBytes+1000) // over one read, under maxLineBytes
	in := "first\n" + long + "\nlast without newline"
	var emitted stderrEvents
	tail := &Tail{}
	w := newStderrWriter(slog.New(slog.DiscardHandler), emitted.emit, "s", tail, nil)
	// HalfReader hides any WriterTo, so io.Copy takes ReadFrom (what
	// os/exec relies on; the assertion below keeps it one).
	var _ io.ReaderFrom = w
	n, err := io.Copy(w, iotest.HalfReader(strings.NewReader(in)))
	if err != nil || n != int64(len(in)) {
		t.Fatalf("io.Copy = %d, %v; want %d, nil", n, err, len(in))
	}
	w.flush()
	if got, want := emitted.texts(t, "s"), []string{"first", long, "last without newline"}; !slices.Equal(got, want) {
		t.Fatalf("lines %d long, want %d: %.80q", len(got), len(want), got)
	}

	// A closed pipe's error reaches os/exec as io.Copy would return it.
	r, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	pw.Close()
	r.Close()
	if _, err := w.ReadFrom(r); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("ReadFrom of a closed pipe: %v, want os.ErrClosed", err)
	}
}
