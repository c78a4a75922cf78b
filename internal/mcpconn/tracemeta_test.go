package mcpconn

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Without a propagator the _meta is left as it is; with one, a ctx
// without a span adds nothing (no empty _meta made), and a span's context
// is written beside what the _meta held.
func TestWithTraceMeta(t *testing.T) {
	meta := mcp.Meta{"progressToken": 1}
	if got := (&Conn{}).withTraceMeta(context.Background(), meta); len(got) != 1 {
		t.Errorf("no propagator: _meta %v, want it unchanged", got)
	}
	c := &Conn{propagator: propagation.TraceContext{}}
	if got := c.withTraceMeta(context.Background(), nil); got != nil {
		t.Errorf("no span: _meta %v, want none", got)
	}
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1, 2, 3}, SpanID: trace.SpanID{4, 5, 6}, TraceFlags: trace.FlagsSampled,
	})
	ctx := trace.ContextWithSpanContext(context.Background(), sc)
	got := c.withTraceMeta(ctx, meta)
	if want := "00-01020300000000000000000000000000-0405060000000000-01"; got["traceparent"] != want || got["progressToken"] != 1 {
		t.Errorf("_meta %v, want traceparent %s beside the progress token", got, want)
	}
}
