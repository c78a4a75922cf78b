package runtime

import (
	"context"
	"errors"
	"testing"
	"time"
)

// MCPServer racing Shutdown either serves (and its server ends with the
// runtime) or fails with ErrShuttingDown; it never adds to the
// runtime's work after Shutdown waited for it (which the race detector,
// or the WaitGroup itself, reports). The window is too narrow to hit on
// purpose; this runs the two side by side a few times.
func TestGatewayServeRacesShutdown(t *testing.T) {
	for range 5 {
		rt := start(t, Options{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			for {
				ctx, cancel := context.WithCancel(context.Background())
				_, err := rt.MCPServer(ctx, MCPServerOptions{})
				cancel()
				if errors.Is(err, ErrShuttingDown) {
					return
				}
				if err != nil {
					t.Errorf("MCPServer: %v", err)
					return
				}
			}
		}()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := rt.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		cancel()
		<-done
	}
}
