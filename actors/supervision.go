package actors

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/openprogram/mcpvisor/events"
)

// ReportPanics is receiver middleware that reports a panicking actor as an
// ActorPanicked event and then re-panics, so supervision still sees the
// failure. The stack (protoactor logs none of its own) is a diagnostic,
// not an event: it goes to the log at Debug.
func ReportPanics(deps *Deps) actor.ReceiverMiddleware {
	return func(next actor.ReceiverFunc) actor.ReceiverFunc {
		return func(c actor.ReceiverContext, env *actor.MessageEnvelope) {
			defer func() {
				if r := recover(); r != nil {
					path := c.Self().Id
					deps.Events.Emit(events.ActorPanicked{Header: events.Header{Server: ServerOf(path)},
						Path: path, Value: panicValue(r)})
					deps.Logger.Debug("actor panic stack", "actor", path, "message", fmt.Sprintf("%T", env.Message), "stack", string(debug.Stack()))
					panic(r)
				}
			}()
			next(c, env)
		}
	}
}

// panicValue is a panic's value as event text. Only the value's text is
// kept, cut to a bound: a panic carries our own messages, never a
// server's secrets (those are scrubbed before they reach an error).
func panicValue(r any) string {
	const limit = 1024
	v := fmt.Sprint(r)
	if len(v) > limit {
		v = v[:limit] + " …"
	}
	return v
}

// ServerOf returns the server an actor path belongs to ("manager/fs/session"
// -> "fs"); "" for the manager itself.
func ServerOf(path string) string {
	rest, ok := strings.CutPrefix(path, "manager/")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, "/")
	return name
}

// StopOnFailure is the supervision strategy of every actor here: a failed
// child is stopped, never restarted in place. The library's in-place
// restart races with Stop and can revive a stopped child with its live
// transport (PROTOACTOR.md); the parent instead sees Terminated and decides
// whether to spawn a fresh one. The failure itself was reported by
// ReportPanics (a panic is the only way an actor fails).
type StopOnFailure struct{}

// HandleFailure stops the failed child.
func (StopOnFailure) HandleFailure(_ *actor.ActorSystem, supervisor actor.Supervisor, child *actor.PID, _ *actor.RestartStatistics, _ any, _ any) {
	supervisor.StopChildren(child)
}

// Props returns the props every actor here is spawned with: a fresh actor
// per incarnation (PropsFromProducer, never a shared closure), panics
// reported, failed children stopped.
func Props(deps *Deps, produce func() actor.Actor) *actor.Props {
	return actor.PropsFromProducer(produce,
		actor.WithReceiverMiddleware(ReportPanics(deps)),
		actor.WithSupervisor(StopOnFailure{}))
}
