package runtime

import (
	"context"
	"log/slog"
	"time"

	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/loggate"
)

// logSubBuffer is the log subscriber's buffer: a burst of server log lines
// (rate-limited at their source to loggate.Burst per server) must not push
// lifecycle lines out of it.
const logSubBuffer = 8192

// What the suppressed-count record of a server's refusals names.
const refusalRecords = "refusal records of a server"

// eventLog turns events into log records: the runtime's one log of what
// happens. Lifecycle is logged at Info, failures at Warn, panics at Error,
// server logs at their mapped level. It runs on one goroutine.
type eventLog struct {
	logger *slog.Logger
	// refusals rate-limits each server's refusal records on the events'
	// own clock, for as long as the server is configured.
	refusals map[string]*loggate.Gate
	now      time.Time // of the event being logged: the gates' clock
}

// logEvents logs every event of sub until the Bus closes, then closes done.
func (r *Runtime) logEvents(sub *events.Subscription, done chan<- struct{}) {
	defer close(done)
	defer sub.Close()
	l := &eventLog{logger: r.opts.Logger, refusals: map[string]*loggate.Gate{}}
	for {
		e, err := sub.Next(context.Background())
		if err != nil {
			return // the Bus closed and everything it held was logged
		}
		l.log(e)
	}
}

func (l *eventLog) log(e events.Event) {
	h := e.Head()
	l.now = h.Time
	logger := l.logger
	if h.Server != "" {
		logger = logger.With("server", h.Server)
	}
	switch e := e.(type) {
	case events.ServerAdded:
		logger.Debug("server added")
	case events.ServerRemoved:
		logger.Debug("server removed")
		if g := l.refusals[h.Server]; g != nil {
			g.Flush(logger, refusalRecords)
			delete(l.refusals, h.Server)
		}
	case events.StateChanged:
		l.stateChanged(logger, e)
	case events.SessionStarted:
		if i := e.ServerInfo; i != nil {
			logger = logger.With("server_name", i.Name, "server_version", i.Version)
		}
		logger.Info("session started", "pid", e.PID, "protocol_version", e.ProtocolVersion)
	case events.InstructionsChanged:
		logger.Info("instructions changed", "bytes", len(e.Instructions)) // the text is for the prompt, not the log
	case events.SessionLost:
		logger.Warn("session lost", "error", e.Error, "exit_status", e.ExitStatus)
	case events.ToolsChanged:
		logger.Info("tools changed", "tools", e.Count, "added", len(e.Added)+e.AddedMore, "removed", len(e.Removed)+e.RemovedMore)
	case events.PromptsChanged:
		logger.Info("prompts changed", "prompts", e.Count, "added", len(e.Added)+e.AddedMore, "removed", len(e.Removed)+e.RemovedMore)
	case events.OutputSchemaUnusable:
		logger.Warn("output schema unusable; the tool's structured results go unchecked", "tool", e.Tool, "error", e.Error)
	case events.LoginRequired:
		logger.Info("waiting for the OAuth login in the browser")
	case events.LoginCompleted:
		logger.Info("login completed")
	case events.LoginFailed:
		logger.Warn("login failed", "error", e.Error)
	case events.TokenRefreshed:
		logger.Info("token refreshed")
	case events.RefreshRefused:
		logger.Warn("token refresh refused; the server needs a new login", "error", e.Error)
	case events.ActorPanicked:
		logger.Error("actor panicked", "actor", e.Path, "panic", e.Value)
	case events.ConfigSaved:
		logger.Info("config saved")
	case events.ConfigLoaded:
		logger.Info("config file parses again; writes are allowed")
	case events.ConfigRejected:
		logger.Warn("config file does not parse; keeping the servers that run and refusing to overwrite it", "error", e.Error)
	case events.RequestRefused:
		g := l.refusals[h.Server]
		if g == nil {
			g = &loggate.Gate{Now: func() time.Time { return l.now }}
			l.refusals[h.Server] = g
		}
		// The source held back e.Suppressed refusals by the same policy:
		// the count logged next says them too.
		g.Skip(e.Suppressed)
		if e.Method == "" { // a count held back: a removed server's last, or a stopped flood's
			g.Flush(logger, refusalRecords)
			delete(l.refusals, h.Server)
			break
		}
		g.Log(logger, refusalRecords, func() {
			logger.Warn("refused a request from a server", "method", e.Method, "limit", e.Limit)
		})
	case events.ResourceUpdated:
		logger.Debug("resource updated", "uri", e.URI)
	case events.StartingOutput:
		// Its line is logged already, as the server's stderr.
	case events.ServerLog:
		if e.Level == events.LevelStderr {
			logger.Info("server stderr", "line", e.Text)
			break
		}
		attrs := []any{"mcp_level", e.Level, "data", e.Text}
		if e.Logger != "" {
			attrs = append(attrs, "logger", e.Logger)
		}
		logger.Log(context.Background(), e.LogLevel(), "server log", attrs...)
	case events.Dropped:
		logger.Warn("the log fell behind and lost events", "lost", e.N)
	}
}

func (l *eventLog) stateChanged(logger *slog.Logger, e events.StateChanged) {
	attrs := []any{"from", e.From, "to", e.To, "restarts", e.Restarts}
	switch e.To {
	case "ready":
		logger.Info("server ready", attrs...)
	case "failed", "needs_auth":
		logger.Warn("server failed", append(attrs, "error", e.Error, "error_kind", e.ErrorKind)...)
	case "backoff":
		delay := e.NextRetryAt.Sub(e.Time).Round(time.Millisecond)
		logger.Warn("session lost; restarting after backoff", append(attrs, "error", e.Error, "delay", delay)...)
	default:
		logger.Debug("server state changed", attrs...)
	}
}
