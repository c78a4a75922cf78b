package mcpconn

import (
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/tools"
)

// sdkFrameTooLarge is the start of the go-sdk's error for an inbound stdio
// frame over mcp.DefaultMaxLineLength. The SDK does not export it, so it is
// known by its text; TestFrameTooLarge notices if that changes.
const sdkFrameTooLarge = "inbound JSON-RPC frame exceeded"

// frameError makes the SDK's "frame too large" read error one a host can
// match (tools.ErrResponseTooLarge) and read. The SDK drops the session
// after it; every call still waiting fails with it.
func frameError(err error) error {
	if err == nil || !strings.Contains(err.Error(), sdkFrameTooLarge) {
		return err
	}
	return fmt.Errorf("%w: the server's answer exceeded the %d MiB frame limit of stdio; the session is ended and restarts (%w)",
		tools.ErrResponseTooLarge, mcp.DefaultMaxLineLength>>20, err)
}
