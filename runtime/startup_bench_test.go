package runtime

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/status"
)

// BenchmarkStartup10k measures one Start with 10 000 configured servers
// until the last one settled, one management API read, and the Shutdown
// (issue 10, finding 8: startup was quadratic in the number of entries).
// Shapes: 9 999 disabled entries ahead of one live stdio server; 10 000
// enabled entries whose command does not exist (each turn fails at once).
// (10 000 servers that all connect are out of its reach: the tool registry
// rebuilds its whole snapshot on every registration.)
func BenchmarkStartup10k(b *testing.B) {
	const n = 10_000
	shapes := []struct {
		name    string
		servers func() []config.Server
		settled func(status.Server) bool
	}{
		{
			name:    "disabled",
			servers: func() []config.Server { return manyDisabled(n-1, exampleServer("live")) },
			settled: func(s status.Server) bool { return s.State == status.Ready },
		},
		{
			name: "failing",
			servers: func() []config.Server {
				out := make([]config.Server, n)
				for i := range out {
					out[i] = config.Server{Name: fmt.Sprintf("bad%05d", i), Type: config.TypeLocal, Command: []string{"/nonexistent/mcpvisor-bench-no-such-command"}, Enabled: true}
				}
				return out
			},
			settled: func(s status.Server) bool { return s.State == status.Failed },
		},
	}
	for _, shape := range shapes {
		b.Run(shape.name, func(b *testing.B) {
			dir := b.TempDir()
			servers := shape.servers()
			testutil.WriteConfig(b, dir, servers...)
			last := servers[len(servers)-1].Name
			for range b.N {
				opts := Options{StateDir: dir, StopGrace: 100 * time.Millisecond}
				began := time.Now()
				rt, err := Start(context.Background(), opts)
				if err != nil {
					b.Fatal(err)
				}
				for {
					if s, ok := rt.board.Get(last); ok && shape.settled(s) {
						break
					}
					if time.Since(began) > time.Minute {
						counts := map[status.State]int{}
						for _, s := range rt.Status().Servers {
							counts[s.State]++
						}
						b.Fatalf("%s not settled after a minute: %v", last, counts)
					}
					time.Sleep(time.Millisecond)
				}
				ready := time.Since(began)
				rec := httptest.NewRecorder()
				rt.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://127.0.0.1/api/mcp/servers/"+last, nil))
				if rec.Code != http.StatusOK {
					b.Fatalf("GET %s: %d %s", last, rec.Code, rec.Body)
				}
				stopBegan := time.Now()
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				if err := rt.Shutdown(ctx); err != nil {
					b.Fatal(err)
				}
				cancel()
				b.ReportMetric(float64(ready.Milliseconds()), "ready-ms")
				b.ReportMetric(float64(time.Since(stopBegan).Milliseconds()), "shutdown-ms")
			}
		})
	}
}
