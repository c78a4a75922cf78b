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
	added uint64 // lines ever added, to tell this session's from older ones
}

// lastSince returns the newest line if any line was added after the Tail
// had seen mark lines.
func (t *Tail) lastSince(mark uint64) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.added == mark || len(t.lines) == 0 {
		return "", false
	}
	if !t.full {
		return t.lines[len(t.lines)-1], true
	}
	return t.lines[(t.next+TailLines-1)%TailLines], true
}

// mark returns how many lines were ever added.
func (t *Tail) mark() uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.added
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
	t.added++
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
	secrets  []string
	redactor *strings.Replacer
	// holdBack is how far past the line cap a too-long line is collected
	// before it is cut, so that a secret crossing the cut is still seen
	// whole by the redactor.
	holdBack int

	mu         sync.Mutex
	partial    []byte
	discarding bool // the rest of a too-long line is dropped
}

func newStderrWriter(logger *slog.Logger, tail *Tail, secrets []string) *stderrWriter {
	w := &stderrWriter{logger: logger, tail: tail, redactor: Redactor(secrets)}
	for _, s := range secrets {
		if len(s) >= minRedactLen {
			w.secrets = append(w.secrets, s)
			w.holdBack = max(w.holdBack, len(s))
		}
	}
	return w
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
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		if !w.discarding {
			w.partial = append(w.partial, chunk...)
		}
		if i < 0 {
			if !w.discarding && len(w.partial) >= maxLineBytes+w.holdBack {
				w.emit(w.partial, true)
				w.partial = w.partial[:0]
				w.discarding = true
			}
			break
		}
		if !w.discarding {
			w.emit(w.partial, false)
		}
		w.partial = w.partial[:0]
		w.discarding = false
		p = p[i+1:]
	}
	return n, nil
}

// flush emits a last line that had no newline.
func (w *stderrWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.partial) > 0 && !w.discarding {
		w.emit(w.partial, false)
	}
	w.partial = nil
	w.discarding = false
}

// emit redacts a whole line first and cuts it afterwards, so a cut never
// exposes part of a secret.
func (w *stderrWriter) emit(b []byte, tooLong bool) {
	line := w.redactor.Replace(strings.TrimRight(string(b), "\r"))
	if tooLong || len(line) > maxLineBytes {
		line = w.cut(line) + " …[line truncated]"
	}
	w.tail.add(line)
	w.logger.Info("server stderr", "line", line)
}

// cut shortens line to maxLineBytes and drops a trailing beginning of a
// secret whose rest fell past the cut.
func (w *stderrWriter) cut(line string) string {
	if len(line) <= maxLineBytes {
		return line
	}
	line = line[:maxLineBytes]
	for _, s := range w.secrets {
		for k := len(s) - 1; k > 0; k-- {
			if strings.HasSuffix(line, s[:k]) {
				line = line[:len(line)-k]
				break
			}
		}
	}
	return line
}
