package runtime

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// gaugePoints collects reader once and counts the servers gauge's points.
func gaugePoints(t *testing.T, reader *sdkmetric.ManualReader) int {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if g, ok := m.Data.(metricdata.Gauge[int64]); ok && m.Name == "mcpvisor.servers" {
				n += len(g.DataPoints)
			}
		}
	}
	return n
}

// eagerProvider's meters run a callback the moment it is registered, as a
// host's reader collecting during Start would.
type eagerProvider struct {
	noop.MeterProvider
	ran atomic.Int32
}

func (p *eagerProvider) Meter(string, ...metric.MeterOption) metric.Meter { return eagerMeter{p: p} }

type eagerMeter struct {
	noop.Meter
	p *eagerProvider
}

func (m eagerMeter) RegisterCallback(f metric.Callback, insts ...metric.Observable) (metric.Registration, error) {
	if err := f(context.Background(), noop.Observer{}); err != nil {
		return nil, err
	}
	m.p.ran.Add(1)
	return m.Meter.RegisterCallback(f, insts...)
}

// A collection while Start builds the runtime (the gauge's callback runs
// before any config is loaded) sees no servers, and does not panic.
func TestGaugeCollectedDuringStart(t *testing.T) {
	mp := &eagerProvider{}
	rt := start(t, Options{MeterProvider: mp})
	if mp.ran.Load() == 0 {
		t.Fatal("the servers gauge's callback was never registered")
	}
	_ = rt
}

// A host's reader collecting all the while runtimes start and shut down
// (a Prometheus scrape, a periodic reader) never panics.
func TestGaugeCollectedWhileStarting(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	var stop atomic.Bool
	var collections atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for !stop.Load() {
			var rm metricdata.ResourceMetrics
			if err := reader.Collect(context.Background(), &rm); err != nil {
				t.Error(err)
				return
			}
			collections.Add(1)
		}
	}()
	for range 20 {
		rt, err := Start(context.Background(), Options{StateDir: t.TempDir(), MeterProvider: mp})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = rt.Shutdown(ctx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
	}
	stop.Store(true)
	<-done
	if collections.Load() == 0 {
		t.Fatal("the reader never collected")
	}
	if n := gaugePoints(t, reader); n != 0 {
		t.Errorf("servers gauge still observed after every runtime shut down: %d points", n)
	}
}

// Shutdown unregisters the servers gauge: the host's provider outlives
// the runtime and must not keep observing it.
func TestGaugeUnregisteredAtShutdown(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	rt := start(t, Options{MeterProvider: mp}, exampleServer("ex"))
	rt.waitReady(t, "ex")
	if n := gaugePoints(t, reader); n == 0 {
		t.Fatal("no servers gauge while running")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := rt.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if n := gaugePoints(t, reader); n != 0 {
		t.Errorf("servers gauge still observed after Shutdown: %d points", n)
	}
}

// A Start that fails (here: the config path is a directory) leaves no
// callback on the host's provider.
func TestGaugeUnregisteredWhenStartFails(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "mcp_servers.json"), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := Start(context.Background(), Options{StateDir: dir, MeterProvider: mp}); err == nil {
		t.Fatal("Start did not fail on a config path that is a directory")
	}
	if n := gaugePoints(t, reader); n != 0 {
		t.Errorf("servers gauge observed after a failed Start: %d points", n)
	}
}
