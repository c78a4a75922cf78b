package exampleserver

import (
	"context"
	"fmt"
	"os"
	"time"
)

// ColdStartLines is how many lines [Options.ColdStart] writes to stderr
// before it waits; the last is [ColdStartLastLine].
const ColdStartLines = 20

// ColdStartTokenEnv is the environment variable a cold start's lines
// quote, when it is set: a test plants a secret there and checks that no
// status or event shows it.
const ColdStartTokenEnv = "COLD_START_TOKEN"

// ColdStartLastLine is the last line a cold start writes before it waits,
// for a server of the default name without $[ColdStartTokenEnv] (see
// [ColdStartLastLineWith]).
var ColdStartLastLine = ColdStartLastLineWith(DefaultName, "")

// ColdStartLastLineWith is the last line of a cold start of a server
// named name ([Options.Name]) whose $[ColdStartTokenEnv] is token.
func ColdStartLastLineWith(name, token string) string {
	return coldStartLine(ColdStartLines, name, token)
}

func coldStartLine(n int, name, token string) string {
	of := ""
	if name != DefaultName {
		of = " of " + name
	}
	line := fmt.Sprintf("cold start%s: fetching packages %d/%d", of, n, ColdStartLines)
	if token != "" {
		line += " with token " + token
	}
	return line
}

// coldStartPoll is how often a cold start looks for its gate.
const coldStartPoll = 10 * time.Millisecond

// coldStart implements Options.ColdStart: a burst of stderr lines, as a
// package download prints, then silence for d, or until a file exists at
// gate (if set), before anything is answered (the client's initialize
// waits in the input stream). It returns ctx's error if ctx ends first.
func coldStart(ctx context.Context, stderr *lockedWriter, name string, d time.Duration, gate string) error {
	token := os.Getenv(ColdStartTokenEnv)
	for n := 1; n <= ColdStartLines; n++ {
		_ = stderr.writeLine(coldStartLine(n, name, token))
	}
	t := time.NewTimer(d)
	defer t.Stop()
	var poll <-chan time.Time
	if gate != "" {
		tick := time.NewTicker(coldStartPoll)
		defer tick.Stop()
		poll = tick.C
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			return nil
		case <-poll:
			if _, err := os.Stat(gate); err == nil {
				return nil
			}
		}
	}
}
