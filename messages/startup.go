package messages

import "github.com/openprogram/mcpvisor/config"

// Commands from the manager to a server actor, and the server's answer.
// Every command carries an epoch, a number the manager increases with each
// command it gives a server; a ServerSettled answers the command of the
// same epoch, and the manager ignores answers to epochs it has moved past
// (a connect that completes after a later delete, disable or restart).

// Connect tells a server actor to (re)connect on Server: any running
// session is stopped first. Sent by the manager to its child.
type Connect struct {
	Epoch  uint64
	Server config.Server
	// User: the user asked for this connect (add, edit, restart, reload),
	// so a server waiting for a new OAuth login may open the browser.
	User bool
}

// Disable tells a server actor to stop its session and show as disabled.
// Sent by the manager to its child.
type Disable struct {
	Epoch  uint64
	Server config.Server
}

// Retune gives a server actor a config that differs from the one it runs
// only in what a running session takes on without a restart (the tools
// filter and the output caps; see config.Server.WithLive): the actor
// re-filters its last listing and caps calls from now on. It carries no
// epoch: it neither replaces nor settles a command. Sent by the manager
// to its child, which answers with Retuned once the registry shows it.
type Retune struct {
	Server config.Server
}

// Retuned answers a Retune (or says that a stopping actor dropped it: a
// later incarnation starts on the config anyway). Sent by the server
// actor to its parent, once per Retune, in order.
type Retuned struct {
	Name string
}

// ServerSettled answers a Connect (the session is ready, or the attempt
// failed) or a Disable. Sent by the server actor to its parent, once per
// command.
type ServerSettled struct {
	Name  string
	Epoch uint64
	Ready bool
	Err   string // why the connect failed, in response form
	// Authorizing: the connect waits for the user's OAuth login. The
	// config works; startup goes on to the next server meanwhile.
	Authorizing bool
}
