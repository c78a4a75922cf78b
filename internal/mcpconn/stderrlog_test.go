package mcpconn

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/loggate"
	"github.com/openprogram/mcpvisor/internal/redact"
)

// logRecords decodes a JSON log into its records.
func logRecords(t *testing.T, logs string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.Lines(logs) {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, rec)
	}
	return out
}

// stderrEvents collects the stderr lines a stderrWriter emits.
type stderrEvents struct {
	mu     sync.Mutex
	events []events.Event
}

func (s *stderrEvents) emit(e events.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, e)
}

// texts returns the lines emitted, each checked to be a ServerLog of
// server at level stderr.
func (s *stderrEvents) texts(t *testing.T, server string) []string {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, e := range s.events {
		l, ok := e.(events.ServerLog)
		if !ok || l.Level != events.LevelStderr || l.Server != server || l.Logger != "" {
			t.Fatalf("a stderr line emitted %#v, want a ServerLog of %q at level stderr", e, server)
		}
		out = append(out, l.Text)
	}
	return out
}

// A stderr flood becomes events as a burst, then one line a second, with
// a count of what was suppressed in the log; the tail keeps the newest
// lines. The clock is the test's: nothing sleeps.
func TestStderrFloodIsRateLimitedInTheLog(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	tail := &Tail{}
	tail.logs.Now = func() time.Time { return now }
	var logs strings.Builder
	var emitted stderrEvents
	w := newStderrWriter(slog.New(slog.NewJSONHandler(&logs, nil)), emitted.emit, "f", tail, nil)
	const flood = 10_000
	for i := range flood {
		fmt.Fprintf(w, "flood %d\n", i)
	}
	if n := len(emitted.texts(t, "f")); n != loggate.Burst || logs.Len() != 0 {
		t.Fatalf("a flood of %d lines emitted %d lines and logged %q, want the burst of %d and nothing logged", flood, n, logs.String(), loggate.Burst)
	}
	lines := tail.Lines()
	if len(lines) != TailLines || lines[TailLines-1] != fmt.Sprintf("flood %d", flood-1) {
		t.Fatalf("tail after the flood: %d lines ending %q", len(lines), lines[len(lines)-1])
	}

	now = now.Add(time.Second) // one more line may pass
	fmt.Fprint(w, "after a second\nand one too many\n")
	recs := logRecords(t, logs.String())
	if len(recs) != 1 || recs[0]["msg"] != "server stderr lines suppressed" || recs[0]["suppressed"] != float64(flood-loggate.Burst) {
		t.Fatalf("after a second the log got %v, want the count of %d suppressed lines", recs, flood-loggate.Burst)
	}
	if got := emitted.texts(t, "f"); len(got) != loggate.Burst+1 || got[loggate.Burst] != "after a second" {
		t.Fatalf("after a second %d lines were emitted, the last %q, want the line after a second", len(got), got[len(got)-1])
	}
	w.flush() // the last suppressed line is counted when the connection ends
	recs = logRecords(t, logs.String())[1:]
	if len(recs) != 1 || recs[0]["suppressed"] != float64(1) {
		t.Fatalf("at the end the log got %v, want a count of 1 suppressed line", recs)
	}
	if got := tail.Lines(); got[TailLines-1] != "and one too many" {
		t.Fatalf("the tail does not end with the last line: %q", got[TailLines-1])
	}
}

// A flood of notifications/message becomes events like a stderr flood
// becomes log lines: the burst, then one a second, with a count of what
// was suppressed in the log before it, and a last count when the session
// ends. The limit is the server's Tail's, so it holds across sessions.
func TestServerLogFloodIsRateLimited(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	tail := &Tail{}
	tail.serverLogs.Now = func() time.Time { return now }
	var logs strings.Builder
	logger := slog.New(slog.NewJSONHandler(&logs, nil))
	var got []events.ServerLog
	emit := func(e events.Event) { got = append(got, e.(events.ServerLog)) }
	const flood = 10_000
	for i := range flood {
		serverLog(emit, "f", logger, &tail.serverLogs, nil, &mcp.LoggingMessageParams{Level: "info", Data: fmt.Sprintf("flood %d", i)})
	}
	if len(got) != loggate.Burst || logs.Len() != 0 {
		t.Fatalf("a flood of %d log messages made %d events and logged %q, want the burst of %d events and nothing logged", flood, len(got), logs.String(), loggate.Burst)
	}
	now = now.Add(time.Second)
	serverLog(emit, "f", logger, &tail.serverLogs, nil, &mcp.LoggingMessageParams{Level: "warning", Data: "after a second"})
	serverLog(emit, "f", logger, &tail.serverLogs, nil, &mcp.LoggingMessageParams{Level: "info", Data: "one too many"})
	recs := logRecords(t, logs.String())
	if len(recs) != 1 || recs[0]["msg"] != "server log messages suppressed" || recs[0]["suppressed"] != float64(flood-loggate.Burst) {
		t.Fatalf("after a second the log got %v, want the count of %d suppressed messages", recs, flood-loggate.Burst)
	}
	if last := got[len(got)-1]; len(got) != loggate.Burst+1 || last.Text != "after a second" || last.Level != "warning" || last.Server != "f" {
		t.Fatalf("after a second the events end with %+v (%d events), want the one message of f after a second", last, len(got))
	}
	newStderrWriter(logger, nil, "f", tail, nil).flush() // the session ends
	recs = logRecords(t, logs.String())[1:]
	if len(recs) != 1 || recs[0]["msg"] != "server log messages suppressed" || recs[0]["suppressed"] != float64(1) {
		t.Fatalf("at the end of the session the log got %v, want a count of 1 suppressed message", recs)
	}
}

// A log message's level is one of MCP's eight or "unknown": the SDK passes
// a server's level through unchecked, and a megabyte level that starts
// with a learned secret must reach neither the event nor the log. The
// logger name is scrubbed and bounded like the text.
func TestServerLogLevelAndLoggerBounded(t *testing.T) {
	const secret = "SECRET-TOKEN-123"
	scrub := redact.New()
	scrub.Learn(secret)
	var got []events.ServerLog
	emit := func(e events.Event) { got = append(got, e.(events.ServerLog)) }
	huge := secret + strings.Repeat("x", 1<<20)
	mcpLevels := []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}
	for _, level := range append(mcpLevels, huge, "shouting", events.LevelStderr) {
		serverLog(emit, "x", slog.New(slog.DiscardHandler), &loggate.Gate{}, scrub,
			&mcp.LoggingMessageParams{Level: mcp.LoggingLevel(level), Logger: huge, Data: "hi"})
	}
	for i, e := range got {
		want := events.LevelUnknown
		if i < 8 {
			want = mcpLevels[i]
		}
		if e.Level != want {
			t.Errorf("message %d: level %.40q, want %q", i, e.Level, want)
		}
		if len(e.Logger) > maxLineBytes+len(redact.Truncated) || strings.Contains(e.Logger, secret) || !strings.HasSuffix(e.Logger, redact.Truncated) {
			t.Errorf("message %d: logger of %d bytes (secret in it: %v), want it scrubbed and cut", i, len(e.Logger), strings.Contains(e.Logger, secret))
		}
	}
	if len(got) != 11 {
		t.Fatalf("%d events, want 11", len(got))
	}
}
