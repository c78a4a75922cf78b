package runtime

import (
	"fmt"

	"github.com/openprogram/mcpvisor/internal/mcpconn"
)

// connOf is the current connection of the named server, for the requests
// that name a server rather than a registry entry. what names the request
// in the error ("reading resource \"demo://readme\""). An unknown name
// fails with ErrUnknownServer, a server without a live session with
// ErrNotReady, at once: nothing waits for a restart.
func (r *Runtime) connOf(server, what string) (*mcpconn.Conn, error) {
	if b := r.bindings.Get(server); b != nil {
		if conn := b.Current(); conn != nil {
			return conn, nil
		}
	}
	if _, ok := r.config.Load().Get(server); !ok {
		return nil, fmt.Errorf("%s on %q: %w", what, server, ErrUnknownServer)
	}
	return nil, fmt.Errorf("%s on %q: %w", what, server, ErrNotReady)
}
