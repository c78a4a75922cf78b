// Package actors holds what the manager, server and session actors share:
// the runtime services they are handed (Deps), the panic-logging middleware
// and the supervision strategy.
package actors

import (
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/status"
	"github.com/openprogram/mcpvisor/tools"
)

// Deps are the runtime services every actor of one Runtime uses. One value
// per Runtime; nothing here is package-level.
type Deps struct {
	Logger   *slog.Logger
	Registry *tools.Registry
	Board    *status.Board
	// Work tracks goroutines that outlive a Receive (dials, closes). An
	// actor may stop before its goroutines finish; Shutdown waits for
	// Work so that no process or goroutine outlives the Runtime.
	Work *sync.WaitGroup
	// Grace is each of the two stop grace periods of a stdio server.
	Grace time.Duration
	// Client names us to servers in initialize.
	Client *mcp.Implementation
	// Config is the configured server set in file order, published by the
	// manager (its only writer) after every change, for readers that must
	// not wait for an actor.
	Config *atomic.Pointer[config.File]
	// ConfigError is why the config file cannot be used, or nil.
	ConfigError *atomic.Pointer[string]
	// Transport, if set, supplies the transport of a server instead of its
	// config (tests and benchmarks: in-memory servers).
	Transport func(config.Server) mcp.Transport
}
