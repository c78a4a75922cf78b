package exampleserver

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// mainArgsEnv, when set in the environment of the test binary, turns it into
// the example server: TestMain runs Main with the JSON-encoded arguments it
// holds instead of the tests. The process tests start such children.
const mainArgsEnv = "EXAMPLESERVER_TEST_MAIN_ARGS"

func TestMain(m *testing.M) {
	if raw, ok := os.LookupEnv(mainArgsEnv); ok {
		var args []string
		if err := json.Unmarshal([]byte(raw), &args); err != nil {
			fmt.Fprintf(os.Stderr, "decoding %s: %v\n", mainArgsEnv, err)
			os.Exit(100)
		}
		os.Exit(Main(args))
	}
	goleak.VerifyTestMain(m)
}
