package mcpconn

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/openprogram/mcpvisor/internal/testutil"
)

var (
	demoBin string
	marker  = fmt.Sprintf("mcpconn-test-%d", os.Getpid())
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mcpvisor-mcpconn-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	demoBin, err = testutil.BuildDemo(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	if left := testutil.ProcessesWithMarker(marker); len(left) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: processes left behind: %v\n", left)
		code = 1
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "FAIL: goroutines leaked: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}
