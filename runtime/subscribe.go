package runtime

import "github.com/openprogram/mcpvisor/events"

// Subscribe returns a subscription to the runtime's events: every event
// from now on (opts.From zero) or, when opts.From is set, the kept history
// from that sequence number first; opts.Server keeps one server's events.
// Read it with Next(ctx) and end it with Close (or end the wait with ctx);
// Shutdown ends every subscription once the last event is out: Next then
// returns what is buffered and events.ErrClosed. A Subscribe after
// Shutdown returns a subscription that is already ended.
//
// It is the events package's pull Subscription rather than a channel or a
// callback. A subscriber that falls behind loses events, and Next tells it
// so (one events.Dropped) the moment it has caught up; a channel could only
// say that with the next event or a goroutine per subscriber, and a
// callback would run on the emitting actor (so a slow one would slow the
// runtime) or need that goroutine too. With Next the subscriber's own ctx
// bounds each wait, nothing runs for it between reads, and one that never
// reads costs its bounded buffer and nothing else.
//
// Sequence numbers count from 1 for each Runtime. A host that keeps the
// last one it saw across a restart of the runtime keeps Boot with it: From
// means something only to the Runtime whose Boot it came from.
func (r *Runtime) Subscribe(opts events.SubscribeOptions) *events.Subscription {
	return r.bus.Subscribe(opts)
}

// Boot returns the id of this Runtime instance: random, set by Start, the
// same for its whole life. The management API's event ids are
// "<boot>-<seq>".
func (r *Runtime) Boot() string { return r.boot }
