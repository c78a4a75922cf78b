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
// whether the host sees the reports. f runs on the connection's goroutine: it must return quickly,
// and be safe to call from several goroutines. It may still be called for
// up to a quarter of a second after the call returned: the server's last
// reports can travel just behind its result.
func WithProgress(ctx context.Context, f func(Progress)) context.Context {
	return context.WithValue(ctx, progressKey{}, f)
}

// ProgressFrom returns the progress callback of ctx, or nil.
func ProgressFrom(ctx context.Context) func(Progress) {
	f, _ := ctx.Value(progressKey{}).(func(Progress))
	return f
}
