package mcpconn

import (
	"fmt"
	"os"
	"testing"

	"github.com/openprogram/mcpvisor/internal/testutil"
)

var (
	demoBin string
	marker  = fmt.Sprintf("mcpconn-test-%d", os.Getpid())
)

func TestMain(m *testing.M) { testutil.Main(m, &demoBin, marker) }
