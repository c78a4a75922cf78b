package messages

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// Describe asks an actor about itself, for the live actor tree
// (GET /debug/actors). Sent from outside the tree (never actor to actor)
// to the manager, a server, a session or a callback actor, each of which
// answers on Reply. An actor that does not answer within the asker's
// timeout is shown unresponsive.
type Describe struct {
	Reply chan<- Description
}

// Description is an actor's answer to Describe.
type Description struct {
	Kind     string // "manager", "server" or "session"
	State    string
	Restarts int
	Since    time.Time
	PID      int // a stdio session's process
	// Children are the actor's live children, to be asked in turn.
	Children []*actor.PID
	// Err says why the actor gave no description (Describe.Fail); a live
	// actor that describes itself leaves it nil.
	Err error
}

// Panic makes the receiving actor panic. It is sent only by the debug
// route that injects failures (runtime Options.Debug), for chaos tests.
type Panic struct{}

// Kill injects a failure into a server actor ("server") or its session
// ("session"): How is "panic", "stop" or "poison". Sent to the manager,
// which holds the live PIDs (sending to a PID by name while it is being
// spawned can crash the sender), and forwarded to the server actor for its
// session. Reply gets nil once the failure is injected.
type Kill struct {
	Server string
	Target string
	How    string
	Reply  chan<- error
}
