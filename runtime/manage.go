package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/messages"
	"github.com/openprogram/mcpvisor/status"
	"github.com/openprogram/mcpvisor/tools"
)

// The management calls below are carried out one at a time by the
// manager actor. A ctx that ends while a call waits makes the call return
// ctx.Err(), but the operation itself still completes (a PATCH whose
// restart succeeds afterwards is still saved): the ctx bounds the wait,
// not the change.

// ServerEntry is one server as the management API shows it: its config in
// response form (every secret masked) and its live status (ToolsFiltered:
// how many of the server's tools its tools filter leaves out).
type ServerEntry struct {
	Name               string       `json:"name"`
	Type               string       `json:"type"`
	Enabled            bool         `json:"enabled"`
	State              status.State `json:"state"`
	Ready              bool         `json:"ready"`
	Error              string       `json:"error"`
	ErrorKind          string       `json:"error_kind"`
	ToolCount          int          `json:"tool_count"`
	ToolsFiltered      int          `json:"tools_filtered"`
	PromptCount        int          `json:"prompt_count"`
	Restarts           int          `json:"restarts"`
	RequestsRefused    int          `json:"requests_refused"`
	Since              time.Time    `json:"since"`
	LastError          string       `json:"last_error,omitempty"`
	NextRetryAt        *time.Time   `json:"next_retry_at,omitempty"`
	PID                int          `json:"pid,omitempty"`
	AuthorizeURL       string       `json:"authorize_url,omitempty"`
	StartingDetail     string       `json:"starting_detail,omitempty"` // as in status.Server
	Command            []string     `json:"command,omitempty"`
	Cwd                string       `json:"cwd,omitempty"`
	URL                string       `json:"url,omitempty"`
	TimeoutSeconds     int          `json:"timeout_seconds"`
	MaxConcurrentCalls int          `json:"max_concurrent_calls"`
	// ConnectTimeoutSeconds … Tools are the effective limits and the tool
	// filter of the config (config.ServerView). PinnedProtocolVersion is
	// the config's protocol_version pin ("" for none); ProtocolVersion
	// below is what the last session negotiated.
	ConnectTimeoutSeconds int                          `json:"connect_timeout_seconds"`
	MaxCallSeconds        int                          `json:"max_call_seconds"`
	MaxOutputBytes        int                          `json:"max_output_bytes"`
	MaxMediaBytes         int                          `json:"max_media_bytes"`
	PinnedProtocolVersion string                       `json:"pinned_protocol_version,omitempty"`
	ToolFilter            config.ToolFilterView        `json:"tools_filter"`
	Env                   map[string]config.SecretView `json:"env"`
	Headers               map[string]config.SecretView `json:"headers"`
	Auth                  config.AuthView              `json:"auth"`
	// ServerInfo, ProtocolVersion and Instructions are what the server
	// said in its last session's initialize, scrubbed and bounded; while
	// the server is not ready they are the last known (see
	// status.Server).
	ServerInfo      *events.ServerInfo `json:"server_info,omitempty"`
	ProtocolVersion string             `json:"protocol_version,omitempty"`
	Instructions    string             `json:"instructions,omitempty"`
}

// ToolEntry is one registered tool of a server, as ServerDetail lists it.
// The metadata fields are as in tools.Tool and omitted when absent.
type ToolEntry struct {
	Name         string             `json:"name"`
	OriginalName string             `json:"original_name"`
	Description  string             `json:"description"`
	Title        string             `json:"title,omitempty"`
	Annotations  *tools.Annotations `json:"annotations,omitempty"`
	OutputSchema json.RawMessage    `json:"output_schema,omitempty"`
	Icons        []tools.Icon       `json:"icons,omitempty"`
	Meta         json.RawMessage    `json:"meta,omitempty"`
	// UIResourceURI and Visibility are as on tools.Tool (MCP Apps).
	UIResourceURI string   `json:"ui_resource_uri,omitempty"`
	Visibility    []string `json:"visibility"`
}

// ServerDetail is a ServerEntry with the server's tools and last stderr
// lines.
type ServerDetail struct {
	ServerEntry
	Tools      []ToolEntry `json:"tools"`
	StderrTail []string    `json:"stderr_tail"`
}

// ReloadResult says what a Reload changed.
type ReloadResult struct {
	Added     []string `json:"added"`
	Removed   []string `json:"removed"`
	Restarted []string `json:"restarted"`
	// Updated names the servers whose change was only to their tools
	// filter or output caps: their running session took it on, without a
	// restart (or, for a server still waiting for its startup turn, that
	// turn starts it on them).
	Updated []string `json:"updated"`
}

func entryOf(view config.ServerView, st status.Server) ServerEntry {
	return ServerEntry{
		Name: view.Name, Type: view.Type, Enabled: view.Enabled,
		State: st.State, Ready: st.Ready, Error: st.Error, ErrorKind: st.ErrorKind,
		ToolCount: st.ToolCount, ToolsFiltered: st.ToolsFiltered, PromptCount: st.PromptCount, Restarts: st.Restarts, RequestsRefused: st.RequestsRefused, Since: st.Since, PID: st.PID,
		LastError: st.LastError, NextRetryAt: st.NextRetryAt, AuthorizeURL: st.AuthorizeURL, StartingDetail: st.StartingDetail,
		Command: view.Command, Cwd: view.Cwd, URL: view.URL, TimeoutSeconds: view.TimeoutSeconds,
		MaxConcurrentCalls: view.MaxConcurrentCalls, Env: view.Env, Headers: view.Headers, Auth: view.Auth,
		ConnectTimeoutSeconds: view.ConnectTimeoutSeconds, MaxCallSeconds: view.MaxCallSeconds,
		MaxOutputBytes: view.MaxOutputBytes, MaxMediaBytes: view.MaxMediaBytes,
		PinnedProtocolVersion: view.ProtocolVersion, ToolFilter: view.Tools,
		ServerInfo: st.ServerInfo, ProtocolVersion: st.ProtocolVersion, Instructions: st.Instructions,
	}
}

// Servers lists every configured server in config order. It never waits
// for an actor or a connect.
func (r *Runtime) Servers() []ServerEntry {
	cfg := r.config.Load().Servers
	out := make([]ServerEntry, 0, len(cfg))
	for _, srv := range cfg {
		st, _ := r.board.Get(srv.Name)
		out = append(out, entryOf(srv.View(), st))
	}
	return out
}

// Server returns one server with its tools and stderr tail, or
// ErrUnknownServer.
func (r *Runtime) Server(name string) (ServerDetail, error) {
	srv, ok := r.config.Load().Get(name)
	if !ok {
		return ServerDetail{}, fmt.Errorf("%w: %q", ErrUnknownServer, name)
	}
	st, _ := r.board.Get(name)
	d := ServerDetail{ServerEntry: entryOf(srv.View(), st), StderrTail: st.StderrTail, Tools: []ToolEntry{}}
	if d.StderrTail == nil {
		d.StderrTail = []string{}
	}
	for _, t := range r.registry.ServerTools(name) {
		d.Tools = append(d.Tools, ToolEntry{
			Name: t.Name, OriginalName: t.OriginalName, Description: t.Description,
			Title: t.Title, Annotations: t.Annotations, OutputSchema: t.OutputSchema, Icons: t.Icons, Meta: t.Meta,
			UIResourceURI: t.UIResourceURI, Visibility: t.Visibility,
		})
	}
	return d, nil
}

// AddServer adds a server, saves the config and starts connecting it in the
// background. It returns once the file is written; the entry then shows the
// server starting.
func (r *Runtime) AddServer(ctx context.Context, s config.Server) (ServerEntry, error) {
	return r.entryAfter(s.Name, r.addOperation(ctx, s))
}

// addOperation hands s to the manager to add and waits for its answer.
func (r *Runtime) addOperation(ctx context.Context, s config.Server) error {
	return r.operate(ctx, func(reply chan<- error) messages.ManagerRequest { return messages.AddServer{Server: s, Reply: reply} })
}

// PatchServer merges a PATCH body into a server's config (C4). A change of
// `enabled` alone is saved at once (disable stops the server, enable starts
// it connecting). Any other change restarts the server on the new config and
// saves it only once that restart succeeded; if it fails, the server is put
// back on its previous config, the file is left byte for byte as it was,
// and the error wraps ErrRestartFailed.
func (r *Runtime) PatchServer(ctx context.Context, name string, patch []byte) (ServerEntry, error) {
	return r.entryAfter(name, r.operate(ctx, func(reply chan<- error) messages.ManagerRequest {
		return messages.PatchServer{Name: name, Patch: patch, Reply: reply}
	}))
}

// RemoveServer stops a server, unregisters its tools and removes it from
// the config file. It returns once the server's processes are gone: its
// process group and, on Linux, every process that carries its mark (the
// stop sequence takes at most about four StopGrace periods for a server
// that ignores stdin's close and SIGTERM; the wait gives up after four
// periods and two seconds more).
func (r *Runtime) RemoveServer(ctx context.Context, name string) error {
	return r.operate(ctx, func(reply chan<- error) messages.ManagerRequest {
		return messages.RemoveServer{Name: name, Reply: reply}
	})
}

// RestartServer reconnects a server on its current config and returns once
// the new session is ready or failed.
func (r *Runtime) RestartServer(ctx context.Context, name string) (ServerEntry, error) {
	return r.entryAfter(name, r.operate(ctx, func(reply chan<- error) messages.ManagerRequest {
		return messages.RestartServer{Name: name, Reply: reply}
	}))
}

// Reload re-reads the config file and applies only the differences: added
// servers start, removed ones stop, changed ones restart on their new
// config. The connects go through the startup slots in file order
// (Options.StartupConcurrency); it returns without waiting for them. It
// does not write the file.
func (r *Runtime) Reload(ctx context.Context) (ReloadResult, error) {
	reply := make(chan messages.ReloadResult, 1)
	got, err := ask(ctx, r, messages.Reload{Reply: reply}, reply)
	if err != nil {
		return ReloadResult{}, err
	}
	if got.Err != nil {
		return ReloadResult{}, fmt.Errorf("reloading: %w", got.Err)
	}
	return ReloadResult{Added: nonNil(got.Added), Removed: nonNil(got.Removed), Restarted: nonNil(got.Restarted), Updated: nonNil(got.Updated)}, nil
}

// Healthy reports whether the runtime serves: nil as soon as Start
// returned, independent of any MCP server; the host's Options.Ready check,
// if set, can make it fail.
func (r *Runtime) Healthy(ctx context.Context) error {
	select {
	case <-r.stopWatch:
		return ErrShuttingDown
	default:
	}
	if r.opts.Ready != nil {
		return r.opts.Ready(ctx)
	}
	return nil
}

func (r *Runtime) entryAfter(name string, err error) (ServerEntry, error) {
	if err != nil {
		return ServerEntry{}, err
	}
	srv, ok := r.config.Load().Get(name)
	if !ok {
		return ServerEntry{}, fmt.Errorf("%w: %q", ErrUnknownServer, name)
	}
	st, _ := r.board.Get(name)
	return entryOf(srv.View(), st), nil
}

// operate sends the manager an operation built around a reply channel and
// waits for its answer, ctx, or the end of the runtime.
func (r *Runtime) operate(ctx context.Context, build func(chan<- error) messages.ManagerRequest) error {
	reply := make(chan error, 1)
	err, askErr := ask(ctx, r, build(reply), reply)
	if askErr != nil {
		return askErr
	}
	return err
}

// ask sends msg to the manager, unless ctx has ended, and waits for one
// value on reply. The manager answers every operation exactly once,
// without blocking (reply has room for it).
func ask[T any](ctx context.Context, r *Runtime, msg messages.ManagerRequest, reply <-chan T) (T, error) {
	var zero T
	select {
	case <-r.stopWatch:
		return zero, ErrShuttingDown
	default:
	}
	if err := ctx.Err(); err != nil {
		// Not sent: an operation refused for its ended context changes
		// nothing. Once sent, a ctx that ends leaves it to complete.
		return zero, err
	}
	r.system.Root.Send(r.manager, msg)
	select {
	case v := <-reply:
		return v, nil
	case <-ctx.Done():
		return zero, ctx.Err()
	case <-r.managerDone:
		// The manager may have answered just before it stopped: select
		// picks among ready cases at random, so look at the reply once
		// more rather than fail an operation that completed.
		select {
		case v := <-reply:
			return v, nil
		default:
			return zero, ErrShuttingDown
		}
	}
}

// nonNil is s, or an empty slice for nil: a JSON answer lists [] rather
// than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
