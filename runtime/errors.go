package runtime

import (
	"errors"
	"fmt"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/internal/oauthflow"
	"github.com/openprogram/mcpvisor/messages"
	"github.com/openprogram/mcpvisor/prompts"
	"github.com/openprogram/mcpvisor/tools"
)

// The outcomes a host matches with errors.Is on what the runtime's methods
// return. Each is the very value the package that detects it uses (an
// alias, not a copy), so it matches however deeply the error is wrapped;
// the error's text adds the server's or tool's name and the cause.
//
// A config that fails validation is also a *config.FieldError (errors.As)
// naming the field.
var (
	// ErrUnknownServer: no server of that name is configured (Server,
	// PatchServer, RemoveServer, RestartServer).
	ErrUnknownServer = messages.ErrUnknownServer
	// ErrServerExists: AddServer with a name already configured.
	ErrServerExists = messages.ErrServerExists
	// ErrRestartFailed: a PATCH's restart on the new config failed; the
	// server runs on its previous config again and the file is unchanged.
	ErrRestartFailed = messages.ErrRestartFailed
	// ErrShuttingDown: the runtime is shutting down, or has shut down.
	ErrShuttingDown = messages.ErrShuttingDown
	// ErrDisabled: RestartServer of a disabled server.
	ErrDisabled = messages.ErrDisabled
	// ErrServerDied: the server's actor died while the operation waited;
	// the next operation on it starts a fresh one.
	ErrServerDied = messages.ErrServerDied
	// ErrSuperseded: a later change to the same server replaced this one
	// before it completed; this one left the file unchanged.
	ErrSuperseded = messages.ErrSuperseded
	// ErrProcessesLinger: RemoveServer removed the server (file, tools,
	// status), but some of its processes still ran when the stop
	// sequence's bound (about four StopGrace periods) ran out; Shutdown
	// still kills them.
	ErrProcessesLinger = messages.ErrProcessesLinger

	// ErrNeedsLogin: the server's OAuth login can no longer be used (its
	// token was refused and the refresh was refused or impossible, or a
	// login failed) and only the user can fix it, by logging in again:
	// RestartServer starts a new login. Until then the server stays in
	// state needs_auth and nothing retries by itself, so no browser loops.
	// A tool call that met the refusal returns it, and so does (together
	// with ErrUnknownTool) a later call of one of the server's tools while
	// it waits in needs_auth or authorizing, since its tools are
	// unregistered meanwhile.
	ErrNeedsLogin = oauthflow.ErrNeedsReauth

	// ErrUnknownTool: CallTool of a name no ready server registers.
	ErrUnknownTool = tools.ErrUnknownTool
	// ErrNotReady: the tool's server has no live session at the moment
	// (starting, restarting, failed, disabled or removed); the call was
	// not sent.
	ErrNotReady = tools.ErrNotReady
	// ErrSessionClosed: the session went away while the call was running
	// or waiting for a max_concurrent_calls slot.
	ErrSessionClosed = tools.ErrSessionClosed
	// ErrCallTimeout: the server did not answer within its timeout_seconds
	// (which includes any wait for a max_concurrent_calls slot). A ctx of
	// the caller's own that ends first gives ctx.Err() instead.
	ErrCallTimeout = tools.ErrTimeout
	// ErrResponseTooLarge: the server's answer was over the size the
	// transport accepts (16 MiB for one stdio frame or a remote answer,
	// 64 KiB for a remote error answer); its session was ended and is
	// restarted like any lost session.
	ErrResponseTooLarge = tools.ErrResponseTooLarge
	// ErrUnresponsive: the server stopped answering (Options.KeepAlive):
	// a probe went unanswered for a whole interval, or its stdio process
	// is stopped. Its process group was killed and its session is
	// restarted like any lost session; it is the cause in the lost
	// session's error, and a call that was in flight fails with
	// ErrSessionClosed and this.
	ErrUnresponsive = tools.ErrUnresponsive
	// ErrUnknownPrompt: GetPrompt of a name no ready server registers.
	ErrUnknownPrompt = prompts.ErrUnknownPrompt

	// ErrInvalidConfig: a server's config (an AddServer entry, a PATCH
	// body, an entry of the file) fails validation; the error is also a
	// *config.FieldError naming the field. Nothing was changed.
	ErrInvalidConfig = config.ErrInvalid
	// ErrConfigUnparsable: the config file on disk does not parse (or is
	// too large to read), so the runtime refuses to overwrite it: every
	// write fails until the file is fixed by hand and reloaded.
	ErrConfigUnparsable = config.ErrUnparsable
	// ErrConfigTooLarge: the config file, as it is on disk or as a write
	// would make it, is over config.MaxFileSize (4 MiB).
	ErrConfigTooLarge = config.ErrTooLarge

	// The requests that name a server rather than a registry entry
	// (ReadResource, Complete, SubscribeResource) also fail with
	// ErrUnknownServer or ErrNotReady, at once; and the subscriptions
	// with ErrTooManySubscriptions and ErrUnknownSubscription (with
	// ResourceSubscription).

	// ErrNotDeclared: the server's session does not declare the
	// capability the request needs (completions, resources, resource
	// subscriptions), so the request was not sent. A reconnect may
	// change what the server declares.
	ErrNotDeclared = errors.New("the server does not declare this capability")
	// ErrBadResourceURI: the URI of a resource read is
	// empty or longer than MaxResourceURIBytes; nothing was sent.
	ErrBadResourceURI = errors.New("bad resource URI")
	// ErrBadCompletionRef: a CompletionRef names neither a prompt nor a
	// server's resource template, or both; nothing was sent.
	ErrBadCompletionRef = errors.New("a completion names either a prompt, or a server and a resource template")
)

// errNeedsLoginState says why a tool of a server that waits for a login is
// not registered; it matches ErrNeedsLogin.
var errNeedsLoginState = fmt.Errorf("waits for a login (%w)", ErrNeedsLogin)
