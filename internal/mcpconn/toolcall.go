package mcpconn

import (
	"context"

	"github.com/openprogram/mcpvisor/tools"
)

// toolCall is the state of one tool call in one allocation: its deadline
// (timeout_seconds restarted by progress, up to max_call_seconds), its
// progress entry, the receiver of its structuredContent (CallToolJSON)
// and the context its request is sent with, which carries that receiver
// to the wire tap. Separately they cost an allocation each, and the
// receiver one more for the context value.
//
// It is not pooled (its deadline's timer is, see deadlineTimer): once
// the call returned, a progress report looked up
// just before, a deadline timer firing as it stops, an HTTP request's
// link reading the context's cause, or a host callback in its
// progressGrace may all still touch it.
type toolCall struct {
	ctx      callContext
	deadline requestDeadline
	progress progressCall
	slot     structuredSlot
}

// start starts the call's deadline within ctx and registers its progress
// entry on c; with slot, its context carries the receiver. It returns the
// context the request is sent with.
func (t *toolCall) start(c *Conn, ctx context.Context, slot bool) context.Context {
	t.ctx.Context = t.deadline.start(ctx, c.clock, c.timeout, c.maxCall, &c.timers)
	if slot {
		t.slot.ids = t.slot.first[:0] // one id unless the SDK retries the call
		t.ctx.slot = &t.slot
	}
	c.progress.add(&t.progress, ctx, tools.ProgressFrom(ctx), &t.deadline)
	return &t.ctx
}

// callContext is a call's request context (its deadline's, which the
// embedded Context is) carrying the call's structuredSlot, if any, under
// structuredSlotKey: context.WithValue without its allocation. Everything
// else is the embedded context's, so that the context package sees
// through it: context.Cause, and children that it cancels without a
// goroutine of their own (the cancelCtx is found by its Value key).
type callContext struct {
	context.Context
	slot *structuredSlot // nil: none
}

// Value is the call's slot for structuredSlotKey, else the embedded
// context's value.
func (c *callContext) Value(key any) any {
	if _, ok := key.(structuredSlotKey); ok && c.slot != nil {
		return c.slot
	}
	return c.Context.Value(key)
}
