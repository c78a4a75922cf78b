package runtime

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/internal/testutil"
)

// demoBin is the example server binary every test here runs as a real
// subprocess; marker tags those processes so that leftovers are found.
var (
	demoBin string
	marker  = fmt.Sprintf("runtime-test-%d", os.Getpid())
)

func TestMain(m *testing.M) { testutil.Main(m, &demoBin, marker) }

// exampleServer configures the example server under name with extra flags.
func exampleServer(name string, flags ...string) config.Server {
	return config.Server{
		Name:    name,
		Type:    config.TypeLocal,
		Command: append([]string{demoBin, "serve"}, flags...),
		Env:     map[string]string{testutil.MarkerEnv: marker},
		Enabled: true,
	}
}

type testRuntime struct {
	*Runtime
	logs *logBuffer
	dir  string
}

// start writes servers to a fresh state dir and starts a runtime on it; the
// runtime is shut down when the test ends and must leave no process.
func start(t *testing.T, opts Options, servers ...config.Server) *testRuntime {
	t.Helper()
	dir := t.TempDir()
	testutil.WriteConfig(t, dir, servers...)
	return startIn(t, dir, opts)
}

// startIn starts a runtime on dir as it is, logging into a buffer unless
// opts has a Logger of its own.
func startIn(t *testing.T, dir string, opts Options) *testRuntime {
	t.Helper()
	logs := &logBuffer{}
	opts.StateDir = dir
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	if opts.StopGrace == 0 {
		opts.StopGrace = 500 * time.Millisecond
	}
	rt, err := Start(context.Background(), opts)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := rt.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		if left := testutil.ProcessesWithMarker(marker); len(left) > 0 {
			t.Errorf("server processes left after Shutdown: %v", left)
		}
	})
	return &testRuntime{Runtime: rt, logs: logs, dir: dir}
}

// logBuffer collects every log line of a runtime, for secret checks.
type logBuffer = testutil.Buffer
