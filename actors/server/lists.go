package server

import (
	"context"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/jonboulle/clockwork"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/binding"
	"github.com/openprogram/mcpvisor/internal/mcpconn"
	"github.com/openprogram/mcpvisor/messages"
)

// List changes (S8): a server's notifications/*/list_changed make this
// actor list again and swap the registrations of that list as a whole.
// One listing per list runs at a time; changes announced meanwhile are
// coalesced into one more listing after it, so a burst costs two listings
// at most and a newer list is never overwritten by an older one.

// relistRetry is how long a failed listing waits before it is tried again.
const relistRetry = 2 * time.Second

// listing is the state of one list of the current session.
type listing struct {
	running bool // a listing is in flight
	again   bool // a change came in meanwhile: list again after it
	// retry is the timer of the next try after a failed listing (for
	// resources: the end of the interval, see resourcesChanged); a
	// session that goes stops it (stopRelists), leaving nothing due.
	retry clockwork.Timer
}

// stopRelists stops the retries of failed listings: they belong to the
// session that is going.
func (a *Actor) stopRelists() {
	for _, l := range a.lists {
		if l.retry != nil {
			l.retry.Stop()
			l.retry = nil
		}
	}
}

// relisted is a listing goroutine's report. conn identifies the session:
// a generation alone would not, since a respawned server actor counts
// generations from the start again and may get its predecessor's reports.
type relisted struct {
	conn    *mcpconn.Conn
	list    string
	tools   []*mcp.Tool
	prompts []*mcp.Prompt
	err     error
}

// resourcesQuiet ends the interval of a session's ResourcesChanged events
// (resourcesChanged).
type resourcesQuiet struct{ gen uint64 }

// resourcesChanged emits ResourcesChanged. Resources are read live by the
// resource tools; nothing of them is registered, so nothing is stale: a
// host that lists them (the gateway) learns it from the event. As
// ResourceUpdated events are, they are at most one per
// mcpconn.UpdateInterval: the first of a quiet session at once, those
// that follow within the interval coalesced into one at its end. A
// server that spams list_changed cannot flood the bus (and make the
// gateway's buffer drop events, which re-lists every server).
func (a *Actor) resourcesChanged(c actor.Context) {
	l := a.listing(mcpconn.ListResources)
	if l.retry != nil { // within the interval: its end emits
		l.again = true
		return
	}
	a.logger.Debug("resources changed")
	a.emit(events.ResourcesChanged{})
	root, self, gen := c.ActorSystem().Root, c.Self(), a.gen
	l.retry = a.deps.AfterFunc(mcpconn.UpdateInterval, func() { root.Send(self, resourcesQuiet{gen: gen}) })
}

// endResourcesInterval ends the interval: a change that came within it is
// emitted now, and starts the next one.
func (a *Actor) endResourcesInterval(c actor.Context, msg resourcesQuiet) {
	if msg.gen != a.gen {
		return
	}
	l := a.listing(mcpconn.ListResources)
	l.retry = nil
	if l.again {
		l.again = false
		a.resourcesChanged(c)
	}
}

// listChanged handles a change announced by the current session.
func (a *Actor) listChanged(c actor.Context, list string) {
	if list == mcpconn.ListResources {
		a.resourcesChanged(c)
		return
	}
	conn := a.binding.Current()
	l := a.listing(list)
	if conn == nil || l.running {
		// Not ready yet, or a listing runs: one more listing after it (or
		// after ready) covers this change, which may have come after the
		// list the connect read.
		l.again = true
		return
	}
	l.running = true
	root, self := c.ActorSystem().Root, c.Self()
	a.deps.Work.Go(func() {
		// Close cancels the listing (mcpconn tracks it), so shutdown never
		// waits for a server that does not answer.
		r := relisted{conn: conn, list: list}
		switch list {
		case mcpconn.ListTools:
			r.tools, r.err = conn.ListTools(context.Background())
		case mcpconn.ListPrompts:
			r.prompts, r.err = conn.ListPrompts(context.Background())
		}
		root.Send(self, r)
	})
}

func (a *Actor) listing(list string) *listing {
	if a.lists == nil {
		a.lists = map[string]*listing{}
	}
	l := a.lists[list]
	if l == nil {
		l = &listing{}
		a.lists[list] = l
	}
	return l
}

// applyListing swaps in a listing of the current session.
func (a *Actor) applyListing(c actor.Context, r relisted) {
	conn := a.binding.Current()
	if conn == nil || r.conn != conn {
		return // of a session that is gone
	}
	l := a.listing(r.list)
	l.running = false
	switch {
	case r.err != nil:
		// Keep the previous list, and try again in a moment: the change
		// itself is not lost.
		a.logger.Warn("listing after a change failed; keeping the previous list and retrying", "list", r.list, "error", r.err)
		root, self, gen, list := c.ActorSystem().Root, c.Self(), a.gen, r.list
		l.retry = a.deps.AfterFunc(relistRetry, func() { root.Send(self, messages.ListChanged{Gen: gen, List: list}) })
	case r.list == mcpconn.ListTools:
		a.listed = r.tools
		a.register(conn, r.tools)
	case r.list == mcpconn.ListPrompts:
		// Names and count come from what was registered: a null entry or
		// two names that sanitise alike are not prompts a host can use.
		list := a.binding.Prompts(conn, r.prompts)
		a.deps.Prompts.SetServer(a.cfg.Name, list)
		names := make([]string, len(list))
		for i, p := range list {
			names[i] = p.Name
		}
		a.promptsChanged(names)
	}
	if l.again {
		l.again = false
		a.listChanged(c, r.list)
	}
}

// register swaps the server's tools for list plus the resource and prompt
// tools its capabilities call for, less those its tools filter leaves out.
func (a *Actor) register(conn *mcpconn.Conn, list []*mcp.Tool) {
	tools := a.binding.Tools(conn, list)
	if err := a.deps.Registry.SetServer(a.cfg.Name, tools); err != nil {
		return // shutting down: nothing registers any more
	}
	a.toolsChanged(tools, a.binding.Filtered())
}

// retune takes on a config that differs from the running one only in the
// tools filter and the output caps: calls are capped by it from now on,
// and when the filter changed the current session's last listing is
// filtered again and swapped in, without asking the server or restarting
// the session (a listing in flight applies the new filter too when it
// lands). A change of the caps alone registers nothing: the tools are the
// same, their calls read the current policy, and a new registration would
// tell every host its tool list changed. A session still to come starts
// on it.
func (a *Actor) retune(msg messages.Retune) {
	refilter := !a.cfg.Tools.Equal(msg.Server.Tools)
	a.cfg = a.cfg.WithLive(msg.Server)
	a.binding.SetPolicy(binding.PolicyOf(a.cfg))
	if conn := a.binding.Current(); conn != nil && refilter {
		a.register(conn, a.listed)
	}
}
