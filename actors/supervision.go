package actors

import (
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/asynkron/protoactor-go/actor"
)

// LogPanics is receiver middleware that logs a panicking actor's stack and
// then re-panics, so supervision still sees the failure (protoactor logs no
// stacks of its own).
func LogPanics(logger *slog.Logger) actor.ReceiverMiddleware {
	return func(next actor.ReceiverFunc) actor.ReceiverFunc {
		return func(c actor.ReceiverContext, env *actor.MessageEnvelope) {
			defer func() {
				if r := recover(); r != nil {
					logger.Error("actor panicked", "actor", c.Self().Id, "panic", fmt.Sprint(r), "message", fmt.Sprintf("%T", env.Message), "stack", string(debug.Stack()))
					panic(r)
				}
			}()
			next(c, env)
		}
	}
}

// StopOnFailure is the supervision strategy of every actor here: a failed
// child is stopped, never restarted in place. The library's in-place
// restart races with Stop and can revive a stopped child with its live
// transport (PROTOACTOR.md); the parent instead sees Terminated and decides
// whether to spawn a fresh one.
type StopOnFailure struct {
	Logger *slog.Logger
}

// HandleFailure stops the failed child.
func (s StopOnFailure) HandleFailure(_ *actor.ActorSystem, supervisor actor.Supervisor, child *actor.PID, _ *actor.RestartStatistics, reason any, _ any) {
	s.Logger.Warn("actor failed; stopping it", "actor", child.Id, "reason", fmt.Sprint(reason))
	supervisor.StopChildren(child)
}

// Props returns the props every actor here is spawned with: a fresh actor
// per incarnation (PropsFromProducer, never a shared closure), panic stacks
// logged, failed children stopped.
func Props(logger *slog.Logger, produce func() actor.Actor) *actor.Props {
	return actor.PropsFromProducer(produce,
		actor.WithReceiverMiddleware(LogPanics(logger)),
		actor.WithSupervisor(StopOnFailure{Logger: logger}))
}
