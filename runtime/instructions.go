package runtime

import (
	"cmp"
	"slices"
)

// ServerInstructions is one server's instructions, for a host's system
// prompt.
type ServerInstructions struct {
	// Server is the server's name in the config.
	Server string `json:"server"`
	// Instructions is the text its last session sent in initialize,
	// scrubbed of secrets and at most about 16 KiB (cut on a rune
	// boundary and marked when it was longer).
	Instructions string `json:"instructions"`
	// Ready says the server is ready now. While it is not (a reconnect,
	// a backoff, a failed start) Instructions is its last session's.
	Ready bool `json:"ready"`
}

// Instructions returns the instructions of every server that has some,
// sorted by server name, so that a prompt built from them is the same
// bytes whatever the config order or the order in which servers became
// ready. A server keeps its entry while it reconnects, so that a flapping
// server does not change the prompt; a disabled or removed server has
// none. The list changes exactly when an events.InstructionsChanged or
// events.ServerRemoved is emitted; a host that wants only the servers it
// can call now drops the entries that are not Ready, and rebuilds on the
// StateChanged events into and out of ready too. It never waits for an
// actor.
func (r *Runtime) Instructions() []ServerInstructions {
	out := []ServerInstructions{}
	for _, srv := range r.config.Load().Servers {
		if st, ok := r.board.Get(srv.Name); ok && st.Instructions != "" {
			out = append(out, ServerInstructions{Server: srv.Name, Instructions: st.Instructions, Ready: st.Ready})
		}
	}
	slices.SortFunc(out, func(a, b ServerInstructions) int { return cmp.Compare(a.Server, b.Server) })
	return out
}
