//go:build unix

package peers_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/internal/testutil"
)

// logRecord is one record the runtime logged, with the attributes its
// logger carried (logger.With) and its own, flattened to strings; a
// group's attributes are keyed "group.key".
type logRecord struct {
	Level   slog.Level
	Message string
	Attrs   map[string]string
}

func (r logRecord) String() string {
	return fmt.Sprintf("%s %q %v", r.Level, r.Message, r.Attrs)
}

// logRecorder keeps every record of a runtime's logger. Safe for
// concurrent use.
type logRecorder struct {
	mu      sync.Mutex
	records []logRecord
}

func (l *logRecorder) add(r logRecord) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.records = append(l.records, r)
}

// matching returns the records for which match is true, oldest first.
func (l *logRecorder) matching(match func(logRecord) bool) []logRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []logRecord
	for _, r := range l.records {
		if match(r) {
			out = append(out, r)
		}
	}
	return out
}

// waitFor waits up to timeout for a record for which match is true and
// returns the matching records; it fails the test (saying what) if none
// came.
func (l *logRecorder) waitFor(t *testing.T, timeout time.Duration, what string, match func(logRecord) bool) []logRecord {
	t.Helper()
	var got []logRecord
	testutil.Eventually(t, timeout, what+" logged", func() bool { got = l.matching(match); return len(got) > 0 })
	return got
}

// recordingHandler is a slog.Handler that records every record into rec,
// whatever its level, and passes it on to inner.
type recordingHandler struct {
	rec    *logRecorder
	inner  slog.Handler
	attrs  []slog.Attr // from WithAttrs, keys already prefixed
	prefix string      // from WithGroup: "a.b."
}

func (h *recordingHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *recordingHandler) Handle(ctx context.Context, r slog.Record) error {
	rec := logRecord{Level: r.Level, Message: r.Message, Attrs: map[string]string{}}
	for _, a := range h.attrs {
		addAttr(rec.Attrs, "", a)
	}
	r.Attrs(func(a slog.Attr) bool {
		addAttr(rec.Attrs, h.prefix, a)
		return true
	})
	h.rec.add(rec)
	if h.inner.Enabled(ctx, r.Level) {
		return h.inner.Handle(ctx, r)
	}
	return nil
}

func addAttr(m map[string]string, prefix string, a slog.Attr) {
	v := a.Value.Resolve()
	if v.Kind() == slog.KindGroup {
		p := prefix
		if a.Key != "" {
			p += a.Key + "."
		}
		for _, g := range v.Group() {
			addAttr(m, p, g)
		}
		return
	}
	m[prefix+a.Key] = v.String()
}

func (h *recordingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	out := *h
	out.attrs = append(append([]slog.Attr(nil), h.attrs...), prefixed(h.prefix, attrs)...)
	out.inner = h.inner.WithAttrs(attrs)
	return &out
}

func (h *recordingHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	out := *h
	out.prefix = h.prefix + name + "."
	out.inner = h.inner.WithGroup(name)
	return &out
}

func prefixed(prefix string, attrs []slog.Attr) []slog.Attr {
	if prefix == "" {
		return attrs
	}
	out := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		out[i] = slog.Attr{Key: prefix + a.Key, Value: a.Value}
	}
	return out
}

// The recording handler sees logger.With attributes, groups and every
// level, and still writes to the inner handler.
func TestRecordingHandler(t *testing.T) {
	var buf syncBuffer
	rec := &logRecorder{}
	logger := slog.New(&recordingHandler{rec: rec, inner: slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})})
	logger.With("server", "everything").Debug("progress", "progress", 1.0)
	logger.WithGroup("g").With("a", 1).Info("grouped", "b", "x")
	got := rec.matching(func(logRecord) bool { return true })
	if len(got) != 2 {
		t.Fatalf("recorded %v, want 2 records", got)
	}
	if r := got[0]; r.Level != slog.LevelDebug || r.Message != "progress" || r.Attrs["server"] != "everything" || r.Attrs["progress"] != "1" {
		t.Errorf("first record = %v", r)
	}
	if r := got[1]; r.Attrs["g.a"] != "1" || r.Attrs["g.b"] != "x" {
		t.Errorf("second record = %v", r)
	}
	if out := buf.String(); strings.Contains(out, "progress") || !strings.Contains(out, "grouped") {
		t.Errorf("inner handler got %q, want only the Info record", out)
	}
}
