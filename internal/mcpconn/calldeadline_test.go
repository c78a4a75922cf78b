package mcpconn

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
)

// ended waits (bounded) for ctx to end, as a fired timer's func runs on a
// goroutine of its own, and returns its cause.
func ended(t *testing.T, ctx context.Context) error {
	t.Helper()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-time.After(5 * time.Second):
		t.Fatal("the deadline did not end the request")
		return nil
	}
}

// Progress restarts timeout_seconds, never past max_call_seconds from the
// start; the cause says which limit ended the request.
func TestDeadlineRestartsOnProgressUpToMaxCall(t *testing.T) {
	clock := clockwork.NewFakeClock()
	ctx, dl := startDeadline(context.Background(), clock, time.Second, 3*time.Second)
	defer dl.stop()
	clock.Advance(900 * time.Millisecond)
	dl.progress() // due at 1.9 s
	clock.Advance(900 * time.Millisecond)
	if ctx.Err() != nil {
		t.Fatalf("ended at 1.8 s, 0.9 s after a report (timeout 1 s): %v", context.Cause(ctx))
	}
	dl.progress() // due at 2.8 s
	clock.Advance(900 * time.Millisecond)
	dl.progress() // 2.7 s: the restart would pass 3 s, so due at 3 s
	if ctx.Err() != nil {
		t.Fatal("ended before max_call_seconds")
	}
	clock.Advance(300 * time.Millisecond)
	if cause := ended(t, ctx); !errors.Is(cause, errMaxCall) {
		t.Fatalf("cause %v, want errMaxCall", cause)
	}
	if !dl.hadProgress() {
		t.Fatal("hadProgress false after reports")
	}
}

// Without progress a request ends at timeout_seconds, whatever
// max_call_seconds; after progress, silence ends it at timeout_seconds
// from the last report.
func TestDeadlineWithoutProgressIsTimeout(t *testing.T) {
	clock := clockwork.NewFakeClock()
	ctx, dl := startDeadline(context.Background(), clock, time.Second, time.Hour)
	defer dl.stop()
	clock.Advance(time.Second)
	if cause := ended(t, ctx); !errors.Is(cause, errIdle) || dl.hadProgress() {
		t.Fatalf("cause %v (progress %v), want errIdle without progress", cause, dl.hadProgress())
	}

	ctx, dl = startDeadline(context.Background(), clock, time.Second, time.Hour)
	defer dl.stop()
	clock.Advance(500 * time.Millisecond)
	dl.progress()
	clock.Advance(999 * time.Millisecond)
	if ctx.Err() != nil {
		t.Fatal("ended before timeout_seconds after the last report")
	}
	clock.Advance(time.Millisecond)
	if cause := ended(t, ctx); !errors.Is(cause, errIdle) || !dl.hadProgress() {
		t.Fatalf("cause %v (progress %v), want errIdle after progress", cause, dl.hadProgress())
	}
}

// A stopped deadline never fires, and a late report does not start it
// again.
func TestStoppedDeadlineStaysStopped(t *testing.T) {
	clock := clockwork.NewFakeClock()
	ctx, dl := startDeadline(context.Background(), clock, time.Second, 10*time.Second)
	dl.stop()
	dl.progress()
	clock.Advance(time.Minute)
	if cause := ended(t, ctx); cause != context.Canceled || dl.hadProgress() {
		t.Fatalf("cause %v (progress %v), want context.Canceled and no progress", cause, dl.hadProgress())
	}
}
