package mcpconn

import (
	"testing"
	"time"
)

// The ticks fall on the grid of the keepalive's start: after a quick
// probe, the next point; after a probe that took its whole interval (a
// tick fell during it), the point it covered, past already, so that the
// tick runs straight after the probe; the points before dropped.
func TestNextTick(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	const iv = time.Second
	for _, tc := range []struct {
		name          string
		next, started time.Time
		want          time.Time
	}{
		{"on time", t0, t0, t0.Add(iv)},
		{"a little late", t0, t0.Add(iv / 10), t0.Add(iv)},
		// The tick started late (the machine was busy): the point its
		// late start covered is dropped, the next one kept.
		{"started past a point", t0, t0.Add(iv + iv/2), t0.Add(2 * iv)},
	} {
		if got := nextTick(tc.next, tc.started, iv); !got.Equal(tc.want) {
			t.Errorf("%s: nextTick = %v, want %v", tc.name, got.Sub(t0), tc.want.Sub(t0))
		}
	}
	// A probe of its whole interval ends at (or after) the next point:
	// the timer is reset to a point in the past, so it fires at once.
	started := t0
	probeEnd := started.Add(iv)
	if next := nextTick(t0, started, iv); next.After(probeEnd) {
		t.Errorf("after a probe of %v the next tick is %v after it ends, want at once", iv, next.Sub(probeEnd))
	}
}

// A keepalive stopped before it started (the transport was gone before
// startKeepAlive ran) never arms a tick, and its end is signalled.
func TestKeepAliveStoppedBeforeStart(t *testing.T) {
	c := &Conn{kaDone: make(chan struct{})}
	c.stopKeepAlive()
	c.startKeepAlive(time.Hour)
	if !isClosed(c.kaDone) {
		t.Fatal("kaDone is open: Close would wait for a keepalive that never runs")
	}
	if c.ka.timer != nil {
		t.Fatal("a tick was armed on a stopped keepalive")
	}
	c.stopKeepAlive() // again: nothing to do, no double close
}

// A keepalive that is off ends at once; a stop after is a no-op.
func TestKeepAliveOff(t *testing.T) {
	c := &Conn{kaDone: make(chan struct{})}
	c.startKeepAlive(0)
	if !isClosed(c.kaDone) {
		t.Fatal("kaDone is open with the keepalive off")
	}
	c.stopKeepAlive()
}

// Close racing the ticks and probes of a fast keepalive (probed with
// server/discover, the session's own first one aside) returns, closes
// the chain once, and leaves no tick armed.
func TestKeepAliveCloseDuringProbes(t *testing.T) {
	for i := range 40 {
		opts := freezeServer("")
		opts.KeepAlive = time.Duration(1+i%5) * time.Millisecond
		c, err := testDial(t.Context(), opts)
		if err != nil {
			t.Fatal(err)
		}
		// Close after a varying number of probes, so that it falls
		// at varying points of the chain.
		for _, d := probesSeen(t, c); d-1 < i%3; _, d = probesSeen(t, c) {
		}
		done := make(chan struct{})
		go func() { c.Close(); close(done) }()
		select {
		case <-done:
		case <-time.After(wait):
			t.Fatalf("iteration %d: Close hung", i)
		}
		if !isClosed(c.kaDone) {
			t.Fatalf("iteration %d: Close returned with the keepalive running", i)
		}
		c.ka.mu.Lock()
		armed := c.ka.timer != nil && c.ka.timer.Stop()
		c.ka.mu.Unlock()
		if armed {
			t.Fatalf("iteration %d: a tick was still armed after Close", i)
		}
	}
}
