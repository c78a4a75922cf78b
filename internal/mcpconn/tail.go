package mcpconn

import (
	"bytes"
	"log/slog"
	"slices"
	"strings"
	"sync"
)

// TailLines is how many stderr lines a server keeps for its status.
const TailLines = 50

// maxLineBytes caps one stderr line; a server that writes megabytes without
// a newline must not grow our memory without bound.
const maxLineBytes = 4096

// Tail keeps the last TailLines stderr lines of a server across its
// sessions. It is safe for concurrent use.
type Tail struct {
	mu    sync.Mutex
	lines []string // ring of at most TailLines
	next  int
	full  bool
}

// Lines returns the kept lines, oldest first.
func (t *Tail) Lines() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.full {
		return append([]string(nil), t.lines...)
	}
	out := make([]string, 0, TailLines)
	out = append(out, t.lines[t.next:]...)
	return append(out, t.lines[:t.next]...)
}

func (t *Tail) add(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.full {
		t.lines = append(t.lines, line)
		if len(t.lines) == TailLines {
			t.full = true
		}
		return
	}
	t.lines[t.next] = line
	t.next = (t.next + 1) % TailLines
}

// stderrWriter splits a server's stderr into lines, removes every known
// secret from each, logs it tagged with the server's name and keeps it in
// the tail. A server that echoes its environment must not leak it.
type stderrWriter struct {
	logger   *slog.Logger
	tail     *Tail
	redactor *strings.Replacer

	mu      sync.Mutex
	partial []byte
}

func newStderrWriter(logger *slog.Logger, tail *Tail, secrets []string) *stderrWriter {
	return &stderrWriter{logger: logger, tail: tail, redactor: Redactor(secrets)}
}

// minRedactLen is the shortest value Redactor masks. Env values such as
// "1" or "true" are not secrets in practice, and masking every "1" in a log
// line would make stderr unreadable.
const minRedactLen = 6

// Redactor returns a replacer that masks every secret value of at least
// minRedactLen bytes. Longer secrets are replaced first so that a secret
// containing another is masked whole.
func Redactor(secrets []string) *strings.Replacer {
	sorted := slices.Clone(secrets)
	slices.SortFunc(sorted, func(a, b string) int { return len(b) - len(a) })
	var pairs []string
	for _, s := range sorted {
		if len(s) >= minRedactLen {
			pairs = append(pairs, s, "[redacted]")
		}
	}
	return strings.NewReplacer(pairs...)
}

func (w *stderrWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.partial = append(w.partial, p...)
			if len(w.partial) >= maxLineBytes {
				w.emit(w.partial)
				w.partial = w.partial[:0]
			}
			break
		}
		if len(w.partial) > 0 {
			w.partial = append(w.partial, p[:i]...)
			w.emit(w.partial)
			w.partial = w.partial[:0]
		} else {
			w.emit(p[:i])
		}
		p = p[i+1:]
	}
	return n, nil
}

// flush emits a last line that had no newline.
func (w *stderrWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.partial) > 0 {
		w.emit(w.partial)
		w.partial = nil
	}
}

func (w *stderrWriter) emit(b []byte) {
	if len(b) > maxLineBytes {
		b = b[:maxLineBytes]
	}
	line := w.redactor.Replace(strings.TrimRight(string(b), "\r"))
	w.tail.add(line)
	w.logger.Info("server stderr", "line", line)
}
