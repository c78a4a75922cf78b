package messages

import (
	"errors"

	"github.com/openprogram/mcpvisor/config"
)

// Management: a caller (the runtime's API methods, on behalf of a host or
// an HTTP request) sends one of these requests to the manager, answered
// on its Reply as request.go says. An operation that arrives while the
// manager stops is answered with ErrShuttingDown.

// Errors the manager answers with, matched with errors.Is.
var (
	ErrUnknownServer = errors.New("unknown server")
	ErrServerExists  = errors.New("server already exists")
	ErrRestartFailed = errors.New("restart on the new config failed")
	ErrShuttingDown  = errors.New("runtime is shutting down")
	ErrDisabled      = errors.New("server is disabled")
	// ErrServerDied: the server's actor died while the operation waited
	// (a bug, logged with its stack); the next command respawns it.
	ErrServerDied = errors.New("server actor stopped unexpectedly")
	// ErrSuperseded: a later change to the same server replaced this one
	// before it completed; this one had no effect on the file.
	ErrSuperseded = errors.New("superseded by a later change to the same server")
	// ErrProcessesLinger: a removal is done (the file no longer has the
	// server, its tools are gone), but some of its processes had not
	// exited when the stop sequence's bound ran out.
	ErrProcessesLinger = errors.New("removed, but some of its processes were still running when the stop sequence's bound ran out")
)

// AddServer adds a server, saves the file and starts connecting.
type AddServer struct {
	Server config.Server
	Reply  chan<- error
}

// PatchServer applies a PATCH body (C4) to a server.
type PatchServer struct {
	Name  string
	Patch []byte
	Reply chan<- error
}

// RemoveServer stops a server and removes it from the file.
type RemoveServer struct {
	Name  string
	Reply chan<- error
}

// RestartServer reconnects a server on its current config.
type RestartServer struct {
	Name  string
	Reply chan<- error
}

// Reload re-reads the file and applies the differences.
type Reload struct {
	Reply chan<- ReloadResult
}

// ReloadResult answers Reload.
type ReloadResult struct {
	Added, Removed, Restarted []string
	// Updated: servers whose tools filter or output caps changed, and
	// nothing else; they got a Retune, not a restart.
	Updated []string
	Err     error
}
