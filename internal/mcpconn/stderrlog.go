package mcpconn

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Stderr lines reach the log at most this fast, per server: a burst of
// stderrLogBurst lines, then stderrLogRate lines a second. Beyond that
// lines are counted, not logged; the next line logged is preceded by one
// saying how many were suppressed (and so is the end of the connection).
// The tail keeps every line either way. A server flooding its stderr
// (tens of MB/s) must not flood the host's log.
const (
	stderrLogBurst = 100
	stderrLogRate  = 1
)

// logGate rate-limits one server's stderr lines on their way to the log.
// Its zero value is ready; it lives on the server's Tail, so that the
// limit holds across the server's sessions (a crash-looping server does
// not get a new burst on every restart). It is safe for concurrent use.
type logGate struct {
	mu         sync.Mutex
	now        func() time.Time // default time.Now; tests drive their own
	lim        *rate.Limiter
	suppressed int
}

// admit reports whether a line may be logged now and, if so, how many
// lines were suppressed before it.
func (g *logGate) admit() (ok bool, suppressed int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.lim == nil {
		g.lim = rate.NewLimiter(stderrLogRate, stderrLogBurst)
	}
	now := time.Now
	if g.now != nil {
		now = g.now
	}
	if !g.lim.AllowN(now(), 1) {
		g.suppressed++
		return false, 0
	}
	suppressed, g.suppressed = g.suppressed, 0
	return true, suppressed
}

// drain returns and resets the count of lines suppressed since the last
// line logged.
func (g *logGate) drain() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := g.suppressed
	g.suppressed = 0
	return n
}
