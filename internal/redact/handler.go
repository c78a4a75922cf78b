package redact

import (
	"context"
	"fmt"
	"log/slog"
)

// Logger returns a logger that scrubs, with s, the message and every
// attribute value of each record before logger's handler sees it: what a
// connection logs (its own lines, the SDK's, the OAuth flow's) never
// carries a secret it knows, even one it learned after the value was made.
func Logger(logger *slog.Logger, s *Scrubber) *slog.Logger {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if h, ok := logger.Handler().(*handler); ok && h.s == s {
		return logger
	}
	return slog.New(&handler{inner: logger.Handler(), s: s})
}

// handler is the slog.Handler of Logger.
type handler struct {
	inner slog.Handler
	s     *Scrubber
}

func (h *handler) Enabled(ctx context.Context, l slog.Level) bool { return h.inner.Enabled(ctx, l) }

func (h *handler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, h.s.String(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.inner.Handle(ctx, out)
}

func (h *handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	clean := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		clean[i] = h.attr(a)
	}
	return &handler{inner: h.inner.WithAttrs(clean), s: h.s}
}

func (h *handler) WithGroup(name string) slog.Handler {
	return &handler{inner: h.inner.WithGroup(name), s: h.s}
}

// attr scrubs one attribute: strings, and anything else that formats as
// text (errors, Stringers, structs), which is logged as its scrubbed text.
func (h *handler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.s.String(v.String()))
	case slog.KindGroup:
		group := v.Group()
		clean := make([]any, len(group))
		for i, g := range group {
			clean[i] = h.attr(g)
		}
		return slog.Group(a.Key, clean...)
	case slog.KindAny:
		text := fmt.Sprint(v.Any())
		if clean := h.s.String(text); clean != text {
			return slog.String(a.Key, clean)
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
