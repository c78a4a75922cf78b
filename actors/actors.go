package actors

import (
	"fmt"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/openprogram/mcpvisor/messages"
)

// Inject makes pid fail the way how says, for the debug route that tests
// supervision: "panic" (the actor panics on a message), "stop" (a system
// Stop, which jumps the queue) or "poison" (a Stop after what is queued).
func Inject(c actor.Context, pid *actor.PID, how string) error {
	switch how {
	case "panic":
		c.Send(pid, messages.Panic{})
	case "stop":
		c.Stop(pid)
	case "poison":
		c.Poison(pid)
	default:
		return fmt.Errorf("how must be panic, stop or poison, not %q", how)
	}
	return nil
}
