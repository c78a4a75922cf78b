package mcpconn

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/internal/redact"
	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/tools"
)

// hostLog records what a host's progress callback got, and what else
// happened, in order.
type hostLog struct {
	mu  sync.Mutex
	got []string
}

func (h *hostLog) add(s string) {
	h.mu.Lock()
	h.got = append(h.got, s)
	h.mu.Unlock()
}

func (h *hostLog) list() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.got...)
}

// routerCall registers one call with a host callback on a new router
// (fake clock): the callback logs each report's message, after closing
// busy and waiting for gate if the message is "wait". done stops the
// call's deadline and ends it.
func routerCall(t *testing.T, scrub *redact.Scrubber, h *hostLog, busy chan<- struct{}, gate <-chan struct{}) (*progressRouter, *clockwork.FakeClock, string, func()) {
	t.Helper()
	r, clock, token, stop, done := routerCallCtx(t, t.Context(), scrub, h, busy, gate)
	return r, clock, token, func() { stop(); done() }
}

// routerCallCtx is routerCall for a call of ctx, whose deadline stop
// stops and which done ends.
func routerCallCtx(t *testing.T, ctx context.Context, scrub *redact.Scrubber, h *hostLog, busy chan<- struct{}, gate <-chan struct{}) (r *progressRouter, clock *clockwork.FakeClock, token string, stop, done func()) {
	t.Helper()
	clock = clockwork.NewFakeClock()
	r = newProgressRouter(clock, scrub, slog.New(slog.DiscardHandler))
	t.Cleanup(r.close)
	_, dl := startDeadline(t.Context(), clock, time.Hour, time.Hour)
	call := r.register(ctx, func(p tools.Progress) {
		if p.Message == "wait" {
			close(busy)
			<-gate
		}
		h.add(p.Message)
	}, dl)
	return r, clock, call.token, dl.stop, call.done
}

func report(r *progressRouter, token, message string) {
	r.deliver(&mcp.ProgressNotificationParams{ProgressToken: token, Progress: 1, Message: message})
}

// While the host's callback is busy, reports are not queued for it: it
// gets the newest one when it is free, and the reports never wait for it.
// When the call ends, the host has the newest report before done returns.
func TestProgressToASlowHostIsCoalesced(t *testing.T) {
	var h hostLog
	busy, gate := make(chan struct{}), make(chan struct{})
	r, _, token, done := routerCall(t, redact.New(), &h, busy, gate)
	report(r, token, "wait") // the host is busy with it until gate
	<-busy
	for i := range 1000 {
		report(r, token, strings.Repeat("r", i%7)) // none waits for the host
	}
	report(r, token, "newest")
	returned := make(chan struct{})
	go func() {
		done()
		h.add("done returned")
		close(returned)
	}()
	close(gate)
	select {
	case <-returned:
	case <-time.After(5 * time.Second):
		t.Fatal("done did not return")
	}
	if got := h.list(); strings.Join(got, ",") != "wait,newest,done returned" {
		t.Fatalf("the host got %q, want the busy report, the newest, then done's return", got)
	}
}

// A report's message reaches the host scrubbed and cut to maxLineBytes
// with redact.Truncated, also when a secret crosses the cut; a short one
// whole, scrubbed.
func TestProgressMessageIsScrubbedAndCut(t *testing.T) {
	const secret = "PROGRESS-SECRET-77"
	var h hostLog
	r, _, token, done := routerCall(t, redact.New(secret), &h, nil, nil)
	defer done()
	long := strings.Repeat("a", maxLineBytes-5) + secret + strings.Repeat("b", 1<<20)
	report(r, token, long)
	flushed(t, r, token)
	report(r, token, "step "+secret)
	flushed(t, r, token)
	got := h.list()
	if len(got) != 2 {
		t.Fatalf("the host got %d reports, want 2", len(got))
	}
	if cut := got[0]; strings.Contains(cut, secret[:5]) || len(cut) != maxLineBytes+len(redact.Truncated) || !strings.HasSuffix(cut, redact.Truncated) {
		t.Errorf("a 1 MiB message with a secret across the cut reached the host as %d bytes ending %q, want %d bytes ending %q and no part of the secret",
			len(cut), cut[max(0, len(cut)-40):], maxLineBytes+len(redact.Truncated), redact.Truncated)
	}
	if got[1] != "step "+redact.Marker {
		t.Errorf("a short message reached the host as %q", got[1])
	}
}

// flushed waits until token's host has the reports offered so far.
func flushed(t *testing.T, r *progressRouter, token string) {
	t.Helper()
	entryOf(r, token).flush(t.Context(), nil, nil)
}

// After a call ended, its callback gets reports for progressGrace, then
// the call leaves the router; Close drops it at once and stops its grace
// timer, and no report reaches the host after Close (checked once any
// delivery the reports could have started has ended).
func TestProgressGraceEndsAndCloseCancelsIt(t *testing.T) {
	var h hostLog
	r, clock, token, done := routerCall(t, redact.New(), &h, nil, nil)
	e := entryOf(r, token)
	done()
	if r.size() != 1 {
		t.Fatalf("the router holds %d calls right after one with a callback ended, want it for progressGrace", r.size())
	}
	clock.Advance(progressGrace)
	awaitSize(t, r, 0)

	r2, clock2, token2, done2 := routerCall(t, redact.New(), &h, nil, nil)
	e2 := entryOf(r2, token2)
	done2()
	if err := clock2.BlockUntilContext(t.Context(), 1); err != nil { // the grace timer
		t.Fatal(err)
	}
	r2.close()
	if r2.size() != 0 {
		t.Fatalf("the router holds %d calls after close", r2.size())
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := clock2.BlockUntilContext(ctx, 0); err != nil {
		t.Fatal("close left the grace timer running")
	}
	report(r2, token2, "after close")
	report(r, token, "after the grace")
	awaitDelivered(t, e)
	awaitDelivered(t, e2)
	if got := h.list(); len(got) != 0 {
		t.Fatalf("reports after the grace or after close reached the host: %q", got)
	}
}

// awaitSize waits (bounded) for the router to hold n calls: a fired
// timer's func runs on a goroutine of its own.
func awaitSize(t *testing.T, r *progressRouter, n int) {
	t.Helper()
	testutil.Eventually(t, 5*time.Second, "the router to drop the call", func() bool { return r.size() == n })
}

// entryOf is token's entry in r (nil if none).
func entryOf(r *progressRouter, token string) *progressCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[token]
}

// awaitDelivered waits (bounded) until e's delivery goroutine, if one
// runs, has ended: whatever was to reach its host has.
func awaitDelivered(t *testing.T, e *progressCall) {
	t.Helper()
	e.mu.Lock()
	idle := e.idle
	e.mu.Unlock()
	if idle == nil {
		return
	}
	select {
	case <-idle:
	case <-time.After(5 * time.Second):
		t.Fatal("the delivery goroutine did not end")
	}
}

// A report pending behind a busy host callback when the grace ends is
// dropped: it does not reach the host after the grace, nor after Close.
func TestProgressPendingAtGraceEndIsDropped(t *testing.T) {
	var h hostLog
	busy, gate := make(chan struct{}), make(chan struct{})
	ctx, cancel := context.WithCancel(t.Context())
	r, clock, token, stop, done := routerCallCtx(t, ctx, redact.New(), &h, busy, gate)
	report(r, token, "wait")
	<-busy
	report(r, token, "late") // pending behind the busy callback
	e := entryOf(r, token)
	cancel() // the caller gave up: done does not wait for the host
	stop()
	done()
	clock.Advance(progressGrace)
	awaitSize(t, r, 0)
	r.close() // Conn.Close
	close(gate)
	awaitDelivered(t, e)
	if got := h.list(); strings.Join(got, ",") != "wait" {
		t.Fatalf("the host got %q, want only the report it was busy with: one pending at the grace's end reached it after close", got)
	}
}

// A call whose server answered returns at the latest progressGrace after
// it ended even while its host callback blocks: the callback does not
// hold the call past its own timeout.
func TestProgressBlockedCallbackHoldsDoneForTheGraceOnly(t *testing.T) {
	var h hostLog
	busy, gate := make(chan struct{}), make(chan struct{})
	r, clock, token, stop, done := routerCallCtx(t, t.Context(), redact.New(), &h, busy, gate)
	defer close(gate)
	report(r, token, "wait")
	<-busy
	report(r, token, "pending")
	stop() // the server answered
	returned := make(chan struct{})
	go func() { done(); close(returned) }()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := clock.BlockUntilContext(ctx, 1); err != nil { // the grace timer
		t.Fatal(err)
	}
	clock.Advance(progressGrace)
	select {
	case <-returned:
	case <-time.After(5 * time.Second):
		t.Fatal("done (CallTool's return) still waits for a blocked host callback after the grace")
	}
}
