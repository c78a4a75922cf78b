package exampleserver

import (
	"context"
	"fmt"
	"time"
)

// ColdStartLines is how many lines [Options.ColdStart] writes to stderr
// before it waits; the last is [ColdStartLastLine].
const ColdStartLines = 20

// ColdStartLastLine is the last line a cold start writes before it waits.
var ColdStartLastLine = coldStartLine(ColdStartLines)

func coldStartLine(n int) string {
	return fmt.Sprintf("cold start: fetching packages %d/%d", n, ColdStartLines)
}

// coldStart implements Options.ColdStart: a burst of stderr lines, as a
// package download prints, then silence for d before anything is
// answered (the client's initialize waits in the input stream). It
// returns ctx's error if ctx ends first.
func coldStart(ctx context.Context, stderr *lockedWriter, d time.Duration) error {
	for n := 1; n <= ColdStartLines; n++ {
		_ = stderr.writeLine(coldStartLine(n))
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
