package mcpconn

import (
	"io/fs"
	"os/exec"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/internal/oauthflow"
	"github.com/openprogram/mcpvisor/internal/redact"
	"github.com/openprogram/mcpvisor/tools"
)

// keptCauses are the errors that callers of a connection tell its errors
// by (errors.Is, in the runtime, the actors and here): a scrubbed error
// keeps these of its causes and no other, since any other link of its
// chain may hold a secret (see redact.Scrubber.Error). An error this
// package or its callers newly match must be added here.
var keptCauses = append([]error{
	tools.ErrUnknownTool, tools.ErrNotReady, tools.ErrSessionClosed, tools.ErrTimeout, tools.ErrResponseTooLarge, tools.ErrUnresponsive,
	ErrCrossOrigin, ErrUnsupported,
	mcp.ErrConnectionClosed, exec.ErrNotFound, fs.ErrNotExist,
}, oauthflow.Sentinels()...) // the login's, context's and ErrPrivateOAuthHost

// scrubError is err as it may leave the connection: scrubbed of every
// secret scrub knows, in its text and its chain.
func scrubError(scrub *redact.Scrubber, err error) error {
	return scrub.Error(err, keptCauses...)
}
