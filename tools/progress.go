package tools

import "context"

// Progress is one progress report of a running call
// (notifications/progress): Progress rises towards Total (0 when the
// server does not know it).
type Progress struct {
	Progress float64 `json:"progress"`
	Total    float64 `json:"total,omitempty"`
	Message  string  `json:"message,omitempty"`
}

type progressKey struct{}

// WithProgress returns a context whose tool calls report their progress to
// f. Every call asks its server for progress (each carries a progress
// token of its own, and each report restarts its timeout); f only says
// whether the host sees the reports. f runs on a goroutine of the call's
// own, one report at a time, and never holds up the connection: reports
// that arrive while f is busy are not queued, f gets the newest of them
// when it returns (so a slow f skips reports, never falls behind). A
// report's message is scrubbed of the server's secrets and cut to 4 KiB
// (" …[line truncated]" marks a cut). Before the call returns, f has the
// newest report the runtime had received, unless f is still busy with an
// earlier one a quarter of a second after the server answered: the call
// waits no longer for f (so a blocking f cannot hold it past its
// timeout), and that report is dropped. Reports the server sent just
// before its result, which the SDK hands over just after it, reach f for
// up to a quarter of a second after the server answered, and none after
// that or after the session closed. An f that never returns keeps its
// goroutine: that is the host's bug.
func WithProgress(ctx context.Context, f func(Progress)) context.Context {
	return context.WithValue(ctx, progressKey{}, f)
}

// ProgressFrom returns the progress callback of ctx, or nil.
func ProgressFrom(ctx context.Context) func(Progress) {
	f, _ := ctx.Value(progressKey{}).(func(Progress))
	return f
}
