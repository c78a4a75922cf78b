package testutil

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/openprogram/mcpvisor/config"
)

// Main is the TestMain of a package whose tests start example servers: it
// builds the demo binary into *demoBin, runs the tests, and fails the run if
// any process tagged with marker survived or any goroutine leaked.
func Main(m *testing.M, demoBin *string, marker string) {
	dir, err := os.MkdirTemp("", "mcpvisor-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	*demoBin, err = BuildDemo(dir)
	if err != nil {
		os.RemoveAll(dir)
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	if left := ProcessesWithMarker(marker); len(left) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: server processes left behind: %v\n", left)
		code = 1
	}
	if code == 0 {
		// A report that reaches an actor after it stopped (a listing or a
		// login answer racing a stop) is a dead letter; protoactor's
		// dead-letter throttle then keeps one goroutine for its period
		// (a second), and it ends by itself.
		if err := goleak.Find(goleak.IgnoreTopFunction("github.com/asynkron/protoactor-go/actor.NewDeadLetter.NewThrottle.func4.1")); err != nil {
			fmt.Fprintf(os.Stderr, "FAIL: goroutines leaked: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// WriteConfig saves servers as dir's config file.
func WriteConfig(tb testing.TB, dir string, servers ...config.Server) {
	tb.Helper()
	file := &config.File{}
	for _, s := range servers {
		file.Put(s)
	}
	if err := (config.Store{Dir: func() (string, error) { return dir, nil }}).Save(file); err != nil {
		tb.Fatalf("saving config: %v", err)
	}
}
