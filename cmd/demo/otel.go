package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/stdout/stdoutmetric"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/openprogram/mcpvisor/runtime"
)

// otelModes are the values of demo run's -otel flag.
const (
	otelOff    = ""
	otelStdout = "stdout"
)

// withOTel sets opts' TracerProvider and MeterProvider for -otel mode:
// with "stdout", the OTel SDK's stdout exporters write one JSON object per
// line to out, per span (batched, as a host's exporter is) and per metric
// batch (every 60 s, and once more at shutdown). The returned function
// flushes and stops both; the caller runs it after the runtime stopped, so
// that the spans of the calls the shutdown ended are in the output too.
func withOTel(mode string, out io.Writer, opts *runtime.Options) (func(context.Context) error, error) {
	switch mode {
	case otelOff:
		return func(context.Context) error { return nil }, nil
	case otelStdout:
	default:
		return nil, fmt.Errorf("-otel %q: the only exporter is stdout", mode)
	}
	res := resource.NewSchemaless(attribute.String("service.name", "mcpvisor-demo"))
	spans, err := stdouttrace.New(stdouttrace.WithWriter(out))
	if err != nil {
		return nil, fmt.Errorf("-otel stdout: %w", err)
	}
	metrics, err := stdoutmetric.New(stdoutmetric.WithWriter(out))
	if err != nil {
		return nil, fmt.Errorf("-otel stdout: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(spans), sdktrace.WithResource(res))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(metrics)), sdkmetric.WithResource(res))
	opts.TracerProvider, opts.MeterProvider = tp, mp
	return func(ctx context.Context) error {
		return errors.Join(tp.Shutdown(ctx), mp.Shutdown(ctx))
	}, nil
}

// lineWriter serialises the writes of its users to one writer: the
// listening line and the two exporters share stdout, and each of their
// writes is a whole line, which must not interleave with another's.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
