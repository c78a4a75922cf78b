package telemetry

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/openprogram/mcpvisor/events"
)

// No provider: no Telemetry at all, and its methods are safe on nil.
func TestNewWithoutProviders(t *testing.T) {
	tel := New(Options{})
	if tel != nil {
		t.Fatalf("New(no providers) = %v; want nil", tel)
	}
	if tel.Propagator() != nil || tel.Close() != nil {
		t.Error("a nil Telemetry has a propagator or fails to close")
	}
	tel.Observe(events.LoginCompleted{}) // must not panic
}

// A span's URI keeps the scheme, host and path only.
func TestSpanURI(t *testing.T) {
	for in, want := range map[string]string{
		"demo://readme":                        "demo://readme",
		"https://u:pw@host/a/b?token=s3cr3t#x": "https://host/a/b",
		"file:///tmp/x?":                       "file:///tmp/x",
		"%zz":                                  "",
	} {
		if got := spanURI(in); got != want {
			t.Errorf("spanURI(%q) = %q, want %q", in, got, want)
		}
	}
}

// A name of any length is cut to MaxName bytes at a rune boundary, with
// the mark.
func TestBoundName(t *testing.T) {
	if got := boundName("read_file"); got != "read_file" {
		t.Errorf("a short name changed: %q", got)
	}
	for _, long := range []string{strings.Repeat("a", 10000), strings.Repeat("é", 200)} {
		got := boundName(long)
		if len(got) > MaxName || !strings.HasSuffix(got, TruncatedMark) || !utf8.ValidString(got) {
			t.Errorf("boundName(%d bytes) = %d bytes %q", len(long), len(got), got)
		}
	}
}

// Observe counts restarts (as the board counts them), logins and
// refreshes by outcome, and nothing else.
func TestObserveCounts(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	tel := New(Options{MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))})
	h := events.Header{Server: "fs"}
	for _, e := range []events.Event{
		events.StateChanged{Header: h, From: "ready", To: "starting"},
		events.StateChanged{Header: h, From: "disabled", To: "starting"}, // an enable, not a restart
		events.StateChanged{Header: h, From: "starting", To: "ready"},
		events.LoginCompleted{Header: h}, events.LoginFailed{Header: h},
		events.TokenRefreshed{Header: h}, events.TokenRefreshed{Header: h}, events.RefreshRefused{Header: h},
		events.SessionStarted{Header: h},
	} {
		tel.Observe(e)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			sum, ok := m.Data.(metricdata.Sum[int64])
			if !ok {
				continue
			}
			for _, p := range sum.DataPoints {
				o, _ := p.Attributes.Value(KeyOutcome)
				got[m.Name+" "+o.AsString()] += p.Value
			}
		}
	}
	want := map[string]int64{MetricRestarts + " ": 1, MetricLogins + " completed": 1, MetricLogins + " failed": 1,
		MetricRefreshes + " refreshed": 2, MetricRefreshes + " refused": 1}
	if len(got) != len(want) {
		t.Errorf("counted %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %d, want %d (all %v)", k, got[k], v, got)
		}
	}
}
