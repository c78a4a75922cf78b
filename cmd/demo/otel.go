package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	promclient "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/attribute"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/exporters/stdout/stdoutmetric"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/openprogram/mcpvisor/internal/netaddr"
	"github.com/openprogram/mcpvisor/runtime"
)

// otelSetup is what demo run's -otel flag made: the providers are in the
// runtime's Options; metrics, with "prometheus", serves GET /metrics;
// flush exports a metric batch now (before the runtime's shutdown, while
// its servers gauge is registered); stop flushes and stops both providers.
type otelSetup struct {
	metrics http.Handler                // nil without prometheus
	flush   func(context.Context) error // nil without -otel
	stop    func(context.Context) error
}

// withOTel sets opts' TracerProvider and MeterProvider for -otel modes, a
// comma-separated list of exporters:
//   - stdout: the OTel SDK's stdout exporters write one JSON object per
//     line to out, per span (batched, as a host's exporter is) and per
//     metric batch (every 60 s, once as the shutdown begins, with the
//     servers gauge, and once more after it, without);
//   - prometheus: the metrics in the Prometheus text format at GET
//     /metrics of the management API's listener (OTel's Prometheus
//     exporter, which protoactor-go links into the binary already).
//
// The caller runs stop after the runtime stopped, so that the spans of
// the calls the shutdown ended are in the output too.
func withOTel(modes string, out io.Writer, opts *runtime.Options) (otelSetup, error) {
	setup := otelSetup{stop: func(context.Context) error { return nil }}
	if modes == "" {
		return setup, nil
	}
	res := resource.NewSchemaless(attribute.String("service.name", "mcpvisor-demo"))
	var readers []sdkmetric.Option
	var spans sdktrace.SpanExporter
	for _, mode := range strings.Split(modes, ",") {
		switch mode {
		case "stdout":
			var err error
			if spans, err = stdouttrace.New(stdouttrace.WithWriter(out)); err != nil {
				return setup, fmt.Errorf("-otel stdout: %w", err)
			}
			metrics, err := stdoutmetric.New(stdoutmetric.WithWriter(out))
			if err != nil {
				return setup, fmt.Errorf("-otel stdout: %w", err)
			}
			readers = append(readers, sdkmetric.WithReader(sdkmetric.NewPeriodicReader(metrics)))
		case "prometheus":
			reg := promclient.NewRegistry()
			exporter, err := otelprom.New(otelprom.WithRegisterer(reg))
			if err != nil {
				return setup, fmt.Errorf("-otel prometheus: %w", err)
			}
			readers = append(readers, sdkmetric.WithReader(exporter))
			setup.metrics = loopbackGET(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		default:
			return setup, fmt.Errorf("-otel %q: the exporters are stdout and prometheus", mode)
		}
	}
	mp := sdkmetric.NewMeterProvider(append(readers, sdkmetric.WithResource(res))...)
	opts.MeterProvider = mp
	setup.flush = mp.ForceFlush
	stops := []func(context.Context) error{mp.Shutdown}
	if spans != nil {
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(spans), sdktrace.WithResource(res))
		opts.TracerProvider = tp
		stops = append(stops, tp.Shutdown)
	}
	setup.stop = func(ctx context.Context) error {
		var errs []error
		for _, stop := range stops {
			errs = append(errs, stop(ctx))
		}
		return errors.Join(errs...)
	}
	return setup, nil
}

// loopbackGET serves h to GET requests addressed to a loopback Host only,
// as the management API answers only those (DNS rebinding).
func loopbackGET(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		switch {
		case !netaddr.Loopback(req.Host):
			http.Error(w, "the metrics answer only requests addressed to localhost", http.StatusForbidden)
		case req.Method != http.MethodGet && req.Method != http.MethodHead:
			http.Error(w, "GET only", http.StatusMethodNotAllowed)
		default:
			h.ServeHTTP(w, req)
		}
	})
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
