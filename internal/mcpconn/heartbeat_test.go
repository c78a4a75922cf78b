package mcpconn

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/openprogram/mcpvisor/internal/oauthflow"
)

// What counts as the server's answer to a probe: its result or its own
// JSON-RPC error, and a refusal that needs a login (it is there); not the
// transport's rejection (refused, DNS, TLS, 502/503/504/429), nor a
// timeout.
func TestServerAnswered(t *testing.T) {
	rejected := &jsonrpc.Error{Code: codeRejected, Message: "rejected by transport"}
	notFound := &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "no ping"}
	for _, c := range []struct {
		err  error
		want bool
	}{
		{nil, true},
		{fmt.Errorf("calling: %w", notFound), true},
		{fmt.Errorf("POST: %w: %w: Bad Request", notFound, rejected), true},
		{fmt.Errorf("%w: POST: Service Unavailable", rejected), false},
		{fmt.Errorf("POST: %w: dial tcp: connection refused", rejected), false},
		{fmt.Errorf("POST: %w: %w", rejected, oauthflow.ErrLoginNotTried), true},
		{context.DeadlineExceeded, false},
		{errors.New("connection closed"), false},
	} {
		if got := serverAnswered(c.err); got != c.want {
			t.Errorf("serverAnswered(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
