package runtime

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/internal/testutil"
)

// BenchmarkReadiness measures L1: the time from Start to the first 200 of
// /healthz, with a configured server that never answers initialize (target
// ≤ 50 ms). Shutdown is outside the measurement.
func BenchmarkReadiness(b *testing.B) {
	dir := b.TempDir()
	hung := exampleServer("hung", "-hang-initialize")
	hung.TimeoutSeconds = 60
	testutil.WriteConfig(b, dir, hung)
	b.ReportAllocs()
	for range b.N {
		began := time.Now()
		rt, err := Start(context.Background(), Options{StateDir: dir, StopGrace: 100 * time.Millisecond})
		if err != nil {
			b.Fatal(err)
		}
		h := rt.Handler()
		for {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://127.0.0.1/healthz", nil))
			if rec.Code == http.StatusOK {
				break
			}
			if time.Since(began) > 10*time.Second {
				b.Fatalf("/healthz still %d after 10s", rec.Code)
			}
		}
		b.StopTimer()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := rt.Shutdown(ctx); err != nil {
			b.Fatal(err)
		}
		cancel()
		b.StartTimer()
	}
}
