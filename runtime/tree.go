package runtime

import (
	"context"
	"path"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/openprogram/mcpvisor/messages"
)

// describeTimeout bounds how long the tree waits for one actor; a busy or
// suspended actor is shown unresponsive instead of holding up the answer.
const describeTimeout = 500 * time.Millisecond

// ActorNode is one node of the live actor tree (GET /debug/actors).
type ActorNode struct {
	Name string `json:"name"`
	Path string `json:"path"`
	// Kind is "manager", "server" or "session".
	Kind string `json:"kind"`
	// State is the actor's own answer, "unresponsive" if it gave none in
	// time, or "gone" if it ended while being asked.
	State    string      `json:"state"`
	Restarts int         `json:"restarts"`
	Since    *time.Time  `json:"since,omitempty"`
	PID      int         `json:"pid,omitempty"` // a stdio session's process
	Children []ActorNode `json:"children"`
}

// ActorTree asks every actor of the tree about itself, children in
// parallel, each bounded by a short timeout: the answer is live, and never
// waits long for an actor that does not answer.
func (r *Runtime) ActorTree(ctx context.Context) (ActorNode, error) {
	select {
	case <-r.stopWatch:
		return ActorNode{}, ErrShuttingDown
	default:
	}
	return r.describe(ctx, r.manager), nil
}

func (r *Runtime) describe(ctx context.Context, pid *actor.PID) ActorNode {
	node := ActorNode{Name: path.Base(pid.Id), Path: pid.Id, Kind: kindOf(pid.Id), Children: []ActorNode{}}
	timeout := describeTimeout
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < timeout {
		timeout = max(time.Until(deadline), time.Millisecond)
	}
	d, ok := r.askDescribe(pid, timeout)
	switch {
	case !ok:
		node.State = "gone"
		return node
	case d == nil || d.Err != nil:
		node.State = "unresponsive"
		return node
	}
	node.Kind, node.State, node.Restarts, node.PID = d.Kind, d.State, d.Restarts, d.PID
	if !d.Since.IsZero() {
		node.Since = &d.Since
	}
	children := make([]ActorNode, len(d.Children))
	var wg sync.WaitGroup
	for i, child := range d.Children {
		wg.Go(func() { children[i] = r.describe(ctx, child) })
	}
	wg.Wait()
	node.Children = append(node.Children, children...)
	return node
}

// askDescribe sends pid a Describe and waits up to timeout for its answer: nil
// if none came in time; ok false if pid is no longer there at all (an
// actor that ended while being asked is one or the other).
func (r *Runtime) askDescribe(pid *actor.PID, timeout time.Duration) (d *messages.Description, ok bool) {
	if _, ok := r.system.ProcessRegistry.Get(pid); !ok {
		return nil, false
	}
	reply := make(chan messages.Description, 1)
	r.system.Root.Send(pid, messages.Describe{Reply: reply})
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case got := <-reply:
		return &got, true
	case <-t.C:
		return nil, true
	}
}

// kindOf names an actor's kind from its stable path, for one that did not
// answer.
func kindOf(id string) string {
	switch {
	case id == "manager":
		return "manager"
	case path.Base(id) == "session":
		return "session"
	default:
		return "server"
	}
}
