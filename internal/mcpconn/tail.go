package mcpconn

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"

	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/loggate"
	"github.com/openprogram/mcpvisor/internal/redact"
)

// TailLines is how many stderr lines a server keeps for its status.
const TailLines = 50

// maxLineBytes caps one stderr line or log message; a server that writes megabytes without
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

	// The rate limits of this server's stderr lines and of its log
	// notifications in the host's log (the loggate policy). They live
	// here, so that they hold across the server's sessions.
	logs       loggate.Gate
	serverLogs loggate.Gate
}

// What the suppressed-count records of a Tail's gates name.
const (
	stderrRecords    = "server stderr lines"
	serverLogRecords = "server log messages"
)

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
// secret from each, emits it as a ServerLog of level events.LevelStderr
// (rate-limited, see loggate: the runtime's log is the one writer of the
// line, and a subscriber sees it too) and keeps it in the tail. A server
// that echoes its environment must not leak it.
type stderrWriter struct {
	logger *slog.Logger // for the counts of lines kept back
	emit   func(events.Event)
	name   string
	tail   *Tail
	scrub  *redact.Scrubber

	mu         sync.Mutex
	partial    []byte
	discarding bool            // the rest of a too-long line is dropped
	starting   *startingOutput // while the connect runs: lines shown as its detail
}

// newStderrWriter returns the stderr writer of server name; a nil emit
// discards the lines' events.
func newStderrWriter(logger *slog.Logger, emit func(events.Event), name string, tail *Tail, scrub *redact.Scrubber) *stderrWriter {
	if emit == nil {
		emit = func(events.Event) {}
	}
	return &stderrWriter{logger: logger, emit: emit, name: name, tail: tail, scrub: scrub}
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
			if !w.discarding && len(w.partial) >= maxLineBytes+w.scrub.Longest() {
				w.line(w.partial, true)
				w.partial = w.partial[:0]
				w.discarding = true
			}
			break
		}
		if !w.discarding {
			w.line(w.partial, false)
		}
		w.partial = w.partial[:0]
		w.discarding = false
		p = p[i+1:]
	}
	return n, nil
}

// startConnect shows the lines written from now on as the detail of the
// connect (events.StartingOutput), until endConnect.
func (w *stderrWriter) startConnect(s *startingOutput) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.starting = s
}

// endConnect ends what startConnect began: once it returns, no line
// becomes a StartingOutput.
func (w *stderrWriter) endConnect() {
	w.mu.Lock()
	s := w.starting
	w.starting = nil
	w.mu.Unlock()
	if s != nil {
		s.close()
	}
}

// flush emits a last line that had no newline, and the counts of stderr
// lines and log messages kept from the log since the last one logged: it
// runs when a session ends.
func (w *stderrWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.partial) > 0 && !w.discarding {
		w.line(w.partial, false)
	}
	w.partial = nil
	w.discarding = false
	w.tail.logs.Flush(w.logger, stderrRecords)
	w.tail.serverLogs.Flush(w.logger, serverLogRecords)
}

// line emits and keeps one line, scrubbed and bounded
// (redact.Scrubber.Line).
func (w *stderrWriter) line(b []byte, tooLong bool) {
	line := w.scrub.Line(strings.TrimRight(string(b), "\r"), maxLineBytes, tooLong)
	w.tail.add(line)
	if w.starting != nil {
		w.starting.offer(line)
	}
	w.tail.logs.Log(w.logger, stderrRecords, func() {
		w.emit(events.ServerLog{Header: events.Header{Server: w.name}, Level: events.LevelStderr, Text: line})
	})
}
