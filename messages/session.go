package messages

import "github.com/openprogram/mcpvisor/internal/mcpconn"

// Session: a server actor spawns one session actor per connect attempt,
// tagged with a generation number. The session reports to its parent with
// the messages below; the parent ignores reports whose Gen is not its
// current one (they come from a session it already stopped).

// SessionReady reports that the session is connected and initialized. The
// Conn stays owned by the session actor (it closes it when it stops); the
// server actor only publishes it for calls.
type SessionReady struct {
	Gen  uint64
	Conn *mcpconn.Conn
}

// SessionFailed reports that connecting failed. Nothing of the attempt is
// left running.
type SessionFailed struct {
	Gen uint64
	Err error
}

// SessionLost reports that a ready session's transport died (process exit,
// EOF, garbage on stdout).
type SessionLost struct {
	Gen uint64
	Err error
	// ExitStatus is the stdio process's exit as Go reads it ("signal:
	// killed"); empty for a remote server or when it was not known yet.
	ExitStatus string
}
