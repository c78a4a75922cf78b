package runtime

import (
	"context"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/openprogram/mcpvisor/internal/telemetry"
)

// A caller's unknown tool or prompt name of any length is cut in the span
// name and gen_ai.*.name: a span holds at most telemetry.MaxName bytes of it.
func TestOTelUnknownNameBounded(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	rt := start(t, Options{TracerProvider: tp})
	long := strings.Repeat("x", 100_000)
	if _, err := rt.CallTool(context.Background(), long, nil); err == nil {
		t.Fatal("an unknown tool was called")
	}
	if _, err := rt.GetPrompt(context.Background(), long, nil); err == nil {
		t.Fatal("an unknown prompt was got")
	}
	spans := rec.Ended()
	if len(spans) != 2 {
		t.Fatalf("%d spans, want 2", len(spans))
	}
	for _, s := range spans {
		if len(s.Name()) > len("prompts/get ")+telemetry.MaxName || !strings.HasSuffix(s.Name(), telemetry.TruncatedMark) {
			t.Errorf("span name of %d bytes: %.40q…", len(s.Name()), s.Name())
		}
		for _, kv := range s.Attributes() {
			if v := kv.Value.Emit(); len(v) > telemetry.MaxName {
				t.Errorf("attribute %s of %d bytes", kv.Key, len(v))
			}
		}
	}
}
