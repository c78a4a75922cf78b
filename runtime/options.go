package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/openprogram/mcpvisor/actors"
	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/internal/mcpconn"
)

// Options configure a Runtime. The zero value is usable: every field has a
// default, written in its comment.
type Options struct {
	// StateDir holds mcp_servers.json. Default: $MCPVISOR_STATE_DIR if set,
	// else $XDG_STATE_HOME/mcpvisor, else ~/.local/state/mcpvisor. It is
	// resolved each time the file is read or written, not once at Start.
	StateDir string
	// Logger receives the runtime's logs, including every server's stderr
	// tagged with its name. Default: discard.
	Logger *slog.Logger
	// StopGrace is how long stopping a stdio server waits after closing its
	// stdin before SIGTERM to its process group, and again before SIGKILL.
	// Default 2s.
	StopGrace time.Duration
	// KeepAlive is how often each ready session is probed for life.
	// Default (zero) 30s; negative: never. A probe is ping, or
	// server/discover on a 2026-07-28 session (which has no ping); it runs
	// beside the calls, takes no slot of max_concurrent_calls and never
	// starts an OAuth login. Only the server's own answer counts (an error
	// answer included); a transport failure (connection refused, a
	// 502/503/504/429 from a gateway) or no answer within the interval
	// does not. Anything the server sends — a result, progress, a
	// notification — is proof of life too. A server is declared lost with
	// ErrUnresponsive, its process group killed and restarted through
	// Restart like a crashed one:
	//   - with no request in flight, within two intervals of going silent
	//     (one probe failing at once, a 503 or a 500, is forgiven: the
	//     next probe decides);
	//   - with requests in flight, only once none of them may be what it
	//     is busy on: it has been silent for timeout_seconds, and every
	//     request in flight has run for timeout_seconds or began after the
	//     silence had lasted timeout_seconds. So a call within its
	//     timeout_seconds on a server that answers one request at a time
	//     is never killed, and a stream of new calls hides a deadlock for
	//     at most twice timeout_seconds (plus an interval);
	//   - on Linux, a stdio server whose leader process is stopped that
	//     does not answer a probe of min(interval, 1s). A stopped
	//     descendant (a worker behind npx, a child) changes no rule: the
	//     server is judged by the rules above (a call in flight within its
	//     timeout_seconds still spares it), and only the error names the
	//     stop (at most 32 processes are looked at, never all of /proc).
	KeepAlive time.Duration
	// Restart is how a lost session is restarted: exponential backoff from
	// 200ms, doubling, capped at 30s, ±20 % jitter, starting afresh after
	// 60s of readiness (the zero value).
	Restart RestartPolicy
	// Debug adds POST /debug/actors/kill to DebugHandler (and allows
	// InjectFailure), which injects failures into server and session
	// actors for chaos tests and demos. Off by default; the route does not
	// exist then.
	Debug bool
	// StartupConcurrency is how many servers may connect at once during
	// startup and a Reload. 0 (the default) or 1 is one after another, in
	// file order; N lets up to N connects wait at once. Turns still begin
	// in file order, and each reads the file as it is at its turn (a
	// server deleted or disabled meanwhile is not started). A connect
	// holds its slot until it is ready or failed (a restart, PATCH or
	// reload of it meanwhile keeps the slot for the new connect); one
	// that waits for the user's OAuth login gives its slot up at once,
	// and retries after a failure take none. The servers a Reload adds
	// or restarts queue for slots after those still waiting, in file
	// order (until its turn a restarted one runs its old session); one
	// server added (AddServer) or restarted (RestartServer, PatchServer)
	// by itself connects at once. Negative is refused by Start
	// (ErrInvalidOptions).
	StartupConcurrency int
	// Ready, if set, is the host's own readiness check: Healthy (and so
	// /healthz) fails while it fails. MCP servers never gate readiness.
	Ready func(ctx context.Context) error
	// ClientName and ClientVersion name the host to servers in initialize.
	// Default "mcpvisor" and the version of the mcpvisor module built into
	// the binary, from its build info: the module's version ("v0.4.1", or
	// the pseudo-version the go command stamps from the checkout), or, for
	// a build it could not stamp (go test, go run, a local replace),
	// "devel", followed by the VCS revision when there is one
	// ("devel+0123456789ab", ".dirty" with uncommitted changes).
	ClientName    string
	ClientVersion string
	// Elicit is called when a server asks the user for input
	// (elicitation/create); server is its configured name. It may block
	// while the user answers, until ctx ends. Default: every request is
	// declined at once (Action "decline"), so a server never hangs on it.
	Elicit func(ctx context.Context, req ElicitationRequest) (ElicitationResult, error)
	// Sample answers a server's sampling/createMessage with the host's
	// model; server is its configured name. The server may offer the model
	// tools of its own (SamplingRequest.Tools) and get tool uses back
	// (SamplingResult.ToolUses); a Sample that ignores them answers with
	// text. Default: the server gets a JSON-RPC error saying sampling is
	// not configured, at once. Elicit, Sample and Roots answer what no
	// gateway client answers instead (MCPServer: a client that declared
	// the capability gets the requests its calls cause).
	Sample func(ctx context.Context, req SamplingRequest) (SamplingResult, error)
	// ServerRequests limit the sampling and elicitation requests each
	// server may send to Sample and Elicit, or to a gateway client (and
	// the roots/list passed to one): 2 at once, 256 KiB of params,
	// 128 tools offered per sampling request, 10 a minute with a burst of
	// 3, per server and kind (the zero value; see ServerRequestLimits).
	ServerRequests ServerRequestLimits
	// Roots are the directories (or other URIs) servers may work in, as
	// roots/list answers them. Default: none.
	Roots []Root
	// RendersApps says the host can render MCP Apps (the
	// io.modelcontextprotocol/ui extension): the runtime advertises the
	// extension to every server, which may then send tools with a ui://
	// resource (tools.Tool.UIResourceURI, read with ReadResource) and
	// tools meant only for the app. Rendering is the host's (see the
	// README: a sandboxed frame on another origin, the resource's CSP).
	// Default false: servers hide their UIs, as from any client that does
	// not advertise it.
	RendersApps bool

	// OpenURL sends the user to an OAuth authorization URL when a server of
	// auth kind "oauth" needs a login (its first one, or after a refused
	// refresh once the user restarts it). The login waits on a loopback
	// callback until the browser comes back, LoginTimeout passes, or the
	// server is restarted, disabled, deleted or shut down. Default: log the
	// URL and try the platform's opener (xdg-open; open on macOS; rundll32
	// url.dll,FileProtocolHandler on Windows), for an http or https URL
	// only. The URL is also in the server's status (authorize_url) while
	// the login waits.
	OpenURL func(ctx context.Context, url string) error
	// LoginTimeout bounds the wait for the browser. Default 5 minutes.
	LoginTimeout time.Duration
	// AllowPrivateOAuthHosts lets the OAuth endpoints of an oauth or
	// client_credentials server (discovery, registration, token, refresh),
	// which the server's metadata names, be on a loopback, private,
	// link-local, shared or unspecified address (or an IPv6 form that
	// carries one: NAT64, 6to4, Teredo) other than the MCP server's own
	// host. Default false: such a connection is refused, so a hostile
	// server cannot point the runtime at services on the user's machine
	// or network. The server's own host is the IP address in its URL, or
	// any loopback address if its URL says localhost; a server known by
	// any other name has none (its DNS is the server's to control), so its
	// OAuth endpoints must be public unless this is set. Through a proxy
	// the endpoint's host is resolved and checked before the request is
	// handed over. The MCP server's own URL is never restricted.
	AllowPrivateOAuthHosts bool
	// LookupEnv gives the values of the references in the servers' config
	// (${VAR}, ${VAR:-default}, ${env:VAR} in command, cwd, env, url,
	// headers and auth secrets), looked up at each connect and only
	// there: the file, the API and every view keep the reference. A
	// server that refers to a variable it reports unset, without a
	// default, fails alone with error_kind "invalid_config" naming the
	// variable. It must be safe for concurrent use: every session's
	// connect calls it, and so does the scrubber of each server's errors
	// and logs, from their own goroutines. Default os.LookupEnv.
	LookupEnv func(name string) (string, bool)

	// Home is the home directory the catalog (Catalog, CatalogDiff,
	// ApplyCatalog) reads the other hosts' files under, and the per-OS
	// config folders beneath it. Default: the user's home
	// (os.UserHomeDir, that is $HOME), resolved at Start; if there is
	// none the catalog lists only the built-in templates. A relative
	// folder is made absolute at Start (against the working directory),
	// so that the catalog's file names are absolute.
	Home string
	// Projects are project folders the catalog also reads each host's
	// project files in (.mcp.json, .cursor/mcp.json, .vscode/mcp.json,
	// ...), made absolute at Start as Home is. Default none.
	Projects []string

	// Subreaper (Linux only; off by default, on in `demo run`) makes the
	// process a child subreaper (prctl PR_SET_CHILD_SUBREAPER): orphans of
	// the servers (a helper that double-forked or called setsid) are
	// re-parented to this process instead of to init, and the runtime
	// reaps the marked ones it kills, each by its own pid. It is opt-in
	// because the setting is process-wide and cannot be scoped: every
	// orphan of every descendant of the host is adopted too, and those
	// the runtime did not start stay zombies until the host reaps them
	// (the runtime never waits for any pid but its own marked ones, so the
	// host's os/exec keeps its exit statuses). Without it, marked
	// processes are killed all the same and init reaps them. Elsewhere
	// than Linux it does nothing (a warning is logged).
	Subreaper bool

	// ToolSearch is the deferred tool mode: ModelTools hands the model a
	// search_tools tool and the pinned tools instead of every tool (see
	// ToolSearch). Default off.
	ToolSearch ToolSearch

	// TracerProvider, if set, makes a client span per tool call, resource
	// read and prompt get, a child of the span in the caller's ctx, and
	// the runtime sends the span's W3C trace context to the server in the
	// request's _meta (traceparent, tracestate). Default: no
	// spans and nothing added to any request. See the README's
	// OpenTelemetry section for the span names and attributes.
	TracerProvider trace.TracerProvider
	// MeterProvider, if set, records the runtime's metrics: calls, errors,
	// call duration, servers by state, restarts, logins and token
	// refreshes. Default: none.
	MeterProvider metric.MeterProvider
	// Propagator writes the trace context into the requests' _meta when
	// TracerProvider is set. Default: W3C TraceContext only. The host's
	// baggage goes to every server (third parties' included) only if it
	// opts in, e.g. with propagation.NewCompositeTextMapPropagator(
	// propagation.TraceContext{}, propagation.Baggage{}).
	Propagator propagation.TextMapPropagator

	// transport, if set, replaces every server's transport; tests and
	// benchmarks in this package use it for in-memory servers.
	transport func(config.Server) mcp.Transport
	// clock drives the lifecycle timers (restart backoff, relist retry,
	// login timeout, respawn) and stamps the events; default the real
	// clock. Tests in this package set a fake one and advance it, so
	// that a backoff takes no real time.
	clock clockwork.Clock
}

// The defaults of Options that are durations, as the field comments say.
// setDefaults applies them (and the restart policy's) once, at Start;
// everything below the runtime gets the resolved values.
const (
	defaultStopGrace    = 2 * time.Second
	defaultLoginTimeout = 5 * time.Minute
	defaultKeepAlive    = 30 * time.Second
)

// ErrInvalidOptions is what Start returns for Options it cannot run with;
// the error names the field.
var ErrInvalidOptions = errors.New("invalid options")

// validate refuses what no default can stand for.
func (o *Options) validate() error {
	if o.StartupConcurrency < 0 {
		return fmt.Errorf("%w: StartupConcurrency must not be negative, got %d", ErrInvalidOptions, o.StartupConcurrency)
	}
	return nil
}

// keepAlive is the resolved probe interval: 0 when KeepAlive is negative
// (off), for the layers below, where ≤ 0 means none.
func (o *Options) keepAlive() time.Duration { return max(o.KeepAlive, 0) }

// Root is one root offered to servers: a URI ("file:///home/me/project")
// and an optional display name.
type Root struct {
	URI  string
	Name string
}

func (o *Options) roots() []*mcp.Root {
	var out []*mcp.Root
	for _, r := range o.Roots {
		out = append(out, &mcp.Root{URI: r.URI, Name: r.Name})
	}
	return out
}

// RestartPolicy is how a lost session is restarted; zero fields take the
// defaults written on Options.Restart.
type RestartPolicy = actors.RestartPolicy

func (o *Options) setDefaults() {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.LookupEnv == nil {
		o.LookupEnv = os.LookupEnv
	}
	if o.Home == "" {
		o.Home, _ = os.UserHomeDir() // none: the catalog has only its templates
	}
	// The catalog names its files, and resolves a project's cwd and
	// ${workspaceFolder}, by these folders: relative ones (`demo run
	// -project .`) would give names an apply's "file" and a server's cwd
	// (which must be absolute) cannot use.
	o.Home = absFolder(o.Home)
	o.Projects = slices.Clone(o.Projects)
	for i, p := range o.Projects {
		o.Projects[i] = absFolder(p)
	}
	if o.StopGrace <= 0 {
		o.StopGrace = defaultStopGrace
	}
	if o.LoginTimeout <= 0 {
		o.LoginTimeout = defaultLoginTimeout
	}
	if o.StartupConcurrency == 0 {
		o.StartupConcurrency = 1
	}
	if o.KeepAlive == 0 {
		o.KeepAlive = defaultKeepAlive
	}
	o.Restart = o.Restart.WithDefaults()
	if o.ClientName == "" {
		o.ClientName = "mcpvisor"
	}
	if o.ClientVersion == "" {
		o.ClientVersion = moduleVersion(debug.ReadBuildInfo())
	}
	if o.OpenURL == nil {
		o.OpenURL = defaultOpenURL(o.Logger)
	}
	if o.clock == nil {
		o.clock = clockwork.NewRealClock()
	}
}

// modulePath is this module's path, as go.mod declares it.
const modulePath = "github.com/openprogram/mcpvisor"

// moduleVersion is the version of the mcpvisor module in a binary of build
// info info (ok as debug.ReadBuildInfo says): the main module's when
// mcpvisor is the main module (its own commands, its tests), else that of
// the mcpvisor dependency (a host), through a replace if any. A version
// the go command could not know ("(devel)", a replace by a directory, no
// build info) is "devel", with the VCS revision the build recorded.
func moduleVersion(info *debug.BuildInfo, ok bool) string {
	if !ok || info == nil {
		return "devel"
	}
	mod := &info.Main
	if mod.Path != modulePath {
		mod = nil
		for _, dep := range info.Deps {
			if dep.Path == modulePath {
				mod = dep
				break
			}
		}
	}
	if mod != nil && mod.Replace != nil {
		mod = mod.Replace
	}
	if mod != nil && mod.Version != "" && mod.Version != "(devel)" {
		return mod.Version
	}
	v := "devel"
	if info.Main.Path != modulePath {
		return v // the host's revision is not ours
	}
	var modified bool
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			v += "+" + s.Value[:min(len(s.Value), 12)]
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if modified && v != "devel" {
		v += ".dirty"
	}
	return v
}

// shutdownBound is how long stopping everything can take: one stdio stop
// sequence (servers stop in parallel), plus margin for the actors and the
// remote transports. Past it Shutdown kills whatever is left anyway.
func (o *Options) shutdownBound() time.Duration {
	return mcpconn.StopBound(o.StopGrace) + 3*time.Second
}

// ResolveStateDir returns the state directory o names, resolved now as
// Start would resolve it (StateDir, else the defaults written there). A
// tool that edits the config file at rest (demo import) uses it.
func (o Options) ResolveStateDir() (string, error) { return o.stateDir() }

// stateDir resolves the state directory now.
func (o *Options) stateDir() (string, error) {
	if o.StateDir != "" {
		return o.StateDir, nil
	}
	if d := os.Getenv("MCPVISOR_STATE_DIR"); d != "" {
		return d, nil
	}
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "mcpvisor"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".local", "state", "mcpvisor"), nil
}

// levelFilter passes on only records at or above min. protoactor logs its
// own lifecycle chatter at Info; a host wants only its warnings.
type levelFilter struct {
	slog.Handler
	min slog.Level
}

func (h levelFilter) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h levelFilter) WithAttrs(attrs []slog.Attr) slog.Handler {
	return levelFilter{h.Handler.WithAttrs(attrs), h.min}
}

func (h levelFilter) WithGroup(name string) slog.Handler {
	return levelFilter{h.Handler.WithGroup(name), h.min}
}

// absFolder is dir made absolute against the working directory; "" (no
// folder) stays "", and so does dir if the working directory is unknown.
func absFolder(dir string) string {
	if dir == "" {
		return ""
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return dir
	}
	return abs
}
