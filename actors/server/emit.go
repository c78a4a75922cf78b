package server

import (
	"slices"

	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/mcpconn"
	"github.com/openprogram/mcpvisor/tools"
)

// withServer sets the server of an event this actor emits.
func withServer(e events.Event, name string) events.Event {
	switch e := e.(type) {
	case events.StateChanged:
		e.Server = name
		return e
	case events.SessionStarted:
		e.Server = name
		return e
	case events.SessionLost:
		e.Server = name
		return e
	case events.InstructionsChanged:
		e.Server = name
		return e
	case events.ResourcesChanged:
		e.Server = name
		return e
	case events.ToolsChanged:
		e.Server = name
		return e
	case events.PromptsChanged:
		e.Server = name
		return e
	case events.OutputSchemaUnusable:
		e.Server = name
		return e
	case events.LoginRequired:
		e.Server = name
		return e
	case events.LoginCompleted:
		e.Server = name
		return e
	case events.LoginFailed:
		e.Server = name
		return e
	}
	return e
}

// sessionStarted emits who the new session's server is, and its
// instructions. InstructionsChanged goes out for every session, before
// the move to ready: the status board, which holds the text shown, drops
// it when the text is the same (a reconnect, a respawned actor).
func (a *Actor) sessionStarted(conn *mcpconn.Conn) { a.announce(conn.PID(), conn.Identity()) }

// announce is sessionStarted for the session of pid that says id. The
// event's server info is its own copy, shared with nothing the actor or
// another event holds: a host may change the event it was given.
func (a *Actor) announce(pid int, id mcpconn.Identity) {
	a.emit(events.SessionStarted{PID: pid, ProtocolVersion: id.ProtocolVersion, ServerInfo: id.ServerInfo.Clone()})
	a.emit(events.InstructionsChanged{Instructions: id.Instructions})
}

// toolsChanged records the tools now registered and emits the change, if
// any: the count, the names that came and went, and how many tools the
// filter left out (a change of that count alone is a change too).
func (a *Actor) toolsChanged(list []tools.Tool, filtered int) {
	names := make([]string, len(list))
	for i, t := range list {
		names[i] = t.Name
	}
	added, removed, changed := diff(a.toolNames, names)
	changed = changed || filtered != a.toolsFiltered
	a.toolNames, a.toolsFiltered = names, filtered
	if changed {
		e := events.ToolsChanged{Count: len(names), Filtered: filtered}
		e.Added, e.AddedMore = events.CapNames(added)
		e.Removed, e.RemovedMore = events.CapNames(removed)
		a.emit(e)
	}
}

// promptsChanged is toolsChanged for the prompts.
func (a *Actor) promptsChanged(names []string) {
	added, removed, changed := diff(a.promptNames, names)
	a.promptNames = names
	if changed {
		e := events.PromptsChanged{Count: len(names)}
		e.Added, e.AddedMore = events.CapNames(added)
		e.Removed, e.RemovedMore = events.CapNames(removed)
		a.emit(e)
	}
}

// diff returns the names of next that are not in prev and those of prev
// that are not in next, sorted; changed is false when the lists hold the
// same names (a first empty listing is no change).
func diff(prev, next []string) (added, removed []string, changed bool) {
	in := func(list []string) map[string]bool {
		m := make(map[string]bool, len(list))
		for _, n := range list {
			m[n] = true
		}
		return m
	}
	was, is := in(prev), in(next)
	for n := range is {
		if !was[n] {
			added = append(added, n)
		}
	}
	for n := range was {
		if !is[n] {
			removed = append(removed, n)
		}
	}
	slices.Sort(added)
	slices.Sort(removed)
	return added, removed, len(added) > 0 || len(removed) > 0 || len(prev) != len(next)
}
