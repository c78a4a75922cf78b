package mcpconn

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"
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

// A stderr flood reaches the log as a burst, then one line a second, with
// a count of what was suppressed; the tail keeps the newest lines. The
// clock is the test's: nothing sleeps.
func TestStderrFloodIsRateLimitedInTheLog(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	tail := &Tail{}
	tail.logs.now = func() time.Time { return now }
	var logs strings.Builder
	w := newStderrWriter(slog.New(slog.NewJSONHandler(&logs, nil)), tail, nil)
	const flood = 10_000
	for i := range flood {
		fmt.Fprintf(w, "flood %d\n", i)
	}
	recs := logRecords(t, logs.String())
	if len(recs) != stderrLogBurst {
		t.Fatalf("a flood of %d lines logged %d records, want the burst of %d", flood, len(recs), stderrLogBurst)
	}
	lines := tail.Lines()
	if len(lines) != TailLines || lines[TailLines-1] != fmt.Sprintf("flood %d", flood-1) {
		t.Fatalf("tail after the flood: %d lines ending %q", len(lines), lines[len(lines)-1])
	}

	now = now.Add(time.Second) // one more line may pass
	fmt.Fprint(w, "after a second\nand one too many\n")
	recs = logRecords(t, logs.String())[stderrLogBurst:]
	if len(recs) != 2 || recs[0]["msg"] != "server stderr lines suppressed" || recs[0]["suppressed"] != float64(flood-stderrLogBurst) ||
		recs[1]["line"] != "after a second" {
		t.Fatalf("after a second the log got %v, want the count of %d suppressed lines, then the line", recs, flood-stderrLogBurst)
	}
	w.flush() // the last suppressed line is counted when the connection ends
	recs = logRecords(t, logs.String())[stderrLogBurst+2:]
	if len(recs) != 1 || recs[0]["suppressed"] != float64(1) {
		t.Fatalf("at the end the log got %v, want a count of 1 suppressed line", recs)
	}
	if got := tail.Lines(); got[TailLines-1] != "and one too many" {
		t.Fatalf("the tail does not end with the last line: %q", got[TailLines-1])
	}
}
