// Package loggate keeps what one server can make the host log bounded: a
// server that floods its stderr, its log notifications or its refused
// requests (tens of thousands a second) must not flood the host's log.
package loggate

import (
	"log/slog"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// The policy of a Gate: a burst of Burst records, then PerSecond records a
// second. Beyond that records are counted, not logged; the next record
// logged is preceded by one (a Warn) saying how many were suppressed, and
// so is a Flush.
const (
	Burst     = 100
	PerSecond = 1
)

// Gate rate-limits one server's records of one kind on their way to the
// log. Its zero value is ready. It should live as long as the server's
// name (not one session), so that a crash-looping server does not get a
// new burst on every restart. It is safe for concurrent use.
type Gate struct {
	// Now is the gate's clock; nil means time.Now. Tests set it before
	// the first record.
	Now func() time.Time

	mu         sync.Mutex
	lim        *rate.Limiter
	suppressed int
}

// Log calls log if a record may be logged now, first logging on logger
// how many records were suppressed before it ("<what> suppressed", with
// the count as "suppressed"); otherwise it counts the record.
func (g *Gate) Log(logger *slog.Logger, what string, log func()) {
	ok, suppressed := g.admit()
	if suppressed > 0 {
		logSuppressed(logger, what, suppressed)
	}
	if ok {
		log()
	}
}

// Skip counts n records as suppressed without offering them: records an
// emitter already held back by the same policy, so that the count the log
// gives next still says them.
func (g *Gate) Skip(n int) {
	if n <= 0 {
		return
	}
	g.mu.Lock()
	g.suppressed += n
	g.mu.Unlock()
}

// Flush logs how many records were suppressed since the last one logged,
// if any, and resets the count: when the server's session ends, or the
// server goes.
func (g *Gate) Flush(logger *slog.Logger, what string) {
	g.mu.Lock()
	n := g.suppressed
	g.suppressed = 0
	g.mu.Unlock()
	if n > 0 {
		logSuppressed(logger, what, n)
	}
}

func logSuppressed(logger *slog.Logger, what string, n int) {
	logger.Warn(what+" suppressed", "suppressed", n)
}

// admit reports whether a record may be logged now and, if so, how many
// were suppressed before it.
func (g *Gate) admit() (ok bool, suppressed int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.lim == nil {
		g.lim = rate.NewLimiter(PerSecond, Burst)
	}
	now := time.Now
	if g.Now != nil {
		now = g.Now
	}
	if !g.lim.AllowN(now(), 1) {
		g.suppressed++
		return false, 0
	}
	suppressed, g.suppressed = g.suppressed, 0
	return true, suppressed
}
