package redact

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
)

// Every part of a record is scrubbed, with what the scrubber knows when
// the record is logged.
func TestLoggerScrubsEveryPart(t *testing.T) {
	var out strings.Builder
	s := New("configured-1")
	log := Logger(slog.New(slog.NewTextHandler(&out, nil)), s).With("conn", "configured-1")
	s.Learn("learned-token-2")
	log.Info("msg learned-token-2", "str", "configured-1", "err", errors.New("said learned-token-2"),
		slog.Group("g", "inner", "learned-token-2"), "n", 7)
	got := out.String()
	if strings.Contains(got, "configured-1") || strings.Contains(got, "learned-token-2") {
		t.Fatalf("a secret was logged: %s", got)
	}
	if strings.Count(got, Marker) != 5 || !strings.Contains(got, "n=7") {
		t.Fatalf("log = %s", got)
	}
	if Logger(log, s) != log {
		t.Error("a scrubbing logger was wrapped twice")
	}
}
