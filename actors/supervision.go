package actors

import (
	"fmt"
	"runtime/debug"
	"strings"
	"unicode/utf8"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/redact"
)

// ReportPanics is receiver middleware that reports a panicking actor as an
// ActorPanicked event and then re-panics, so supervision still sees the
// failure. The stack (protoactor logs none of its own) is a diagnostic,
// not an event: it goes to the log, at Error, since a panic is a bug.
// emit is where the event goes (a server incarnation's gate, so that a
// panic of a removed server's actor cannot follow its ServerRemoved); nil
// is the bus itself.
func ReportPanics(deps *Deps, emit func(events.Event)) actor.ReceiverMiddleware {
	if emit == nil {
		emit = deps.Events.Emit
	}
	return func(next actor.ReceiverFunc) actor.ReceiverFunc {
		return func(c actor.ReceiverContext, env *actor.MessageEnvelope) {
			defer func() {
				if r := recover(); r != nil {
					path := c.Self().Id
					server := ServerOf(path)
					deps.Logger.Error("actor panic stack", "actor", path, "message", fmt.Sprintf("%T", env.Message), "stack", string(debug.Stack()))
					emit(events.ActorPanicked{Header: events.Header{Server: server},
						Path: path, Value: panicValue(r, deps.scrubberOf(server))})
					panic(r)
				}
			}()
			next(c, env)
		}
	}
}

// panicValueLimit bounds the text of a panic's value in an event.
const panicValueLimit = 1024

// panicValue is a panic's value as event text: its text, scrubbed of the
// server's configured secrets (a panic should carry only our own
// messages, but an error wrapped into one may quote a config value), then
// cut to a bound on a UTF-8 boundary.
func panicValue(r any, scrub *redact.Scrubber) string {
	v := scrub.String(fmt.Sprint(r))
	if len(v) <= panicValueLimit {
		return v
	}
	n := panicValueLimit
	for n > 0 && !utf8.RuneStart(v[n]) {
		n--
	}
	return scrub.Cut(v, n) + " …"
}

// scrubberOf returns a scrubber of server's configured secrets, the values
// its references expand to included; nil (which scrubs nothing) for no
// server or one not configured. The secrets a connection learned (OAuth
// tokens) live in its own scrubber, out of reach here.
func (d *Deps) scrubberOf(server string) *redact.Scrubber {
	if server == "" || d.Config == nil {
		return nil
	}
	srv, ok := d.Config.Load().Get(server)
	if !ok {
		return nil
	}
	// Its expansion's secrets even when the expansion fails as a whole
	// (an expanded value that does not validate may be in the error).
	return redact.New(srv.ExpandedSecrets(d.LookupEnv)...)
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
	return PropsEmitting(deps, nil, produce)
}

// PropsEmitting is Props for an actor of a server incarnation: its panic
// is reported through emit, the incarnation's gated emit.
func PropsEmitting(deps *Deps, emit func(events.Event), produce func() actor.Actor) *actor.Props {
	return actor.PropsFromProducer(produce,
		actor.WithReceiverMiddleware(ReportPanics(deps, emit)),
		actor.WithSupervisor(StopOnFailure{}))
}
