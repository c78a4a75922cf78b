// Package events is mcpvisor's one event stream: a closed set of typed
// events and the Bus that carries them from the actors to the status
// board, the log and the host.
//
// # Events
//
// Every change worth knowing is one of the types of this package:
//
//	ServerAdded, ServerRemoved              a server enters or leaves the config
//	StateChanged                            starting -> ready -> backoff -> …
//	SessionStarted, SessionLost             a session begins (pid, server info) or dies
//	InstructionsChanged                     a server's instructions text changed
//	ToolsChanged, PromptsChanged            a listing, with names added/removed
//	OutputSchemaUnusable                    a tool's results go unchecked
//	LoginRequired, LoginCompleted,
//	LoginFailed                             a browser login
//	TokenRefreshed, RefreshRefused          background token renewal
//	ActorPanicked                           a panic in the supervision tree
//	ConfigSaved, ConfigRejected,
//	ConfigLoaded                            the config file
//	RequestRefused                          a server's request a limit refused (not in history)
//	ServerLog                               a server's log line (not in history)
//	ResourceUpdated                         a subscribed resource changed (not in history)
//	StartingOutput                          a starting server's last stderr line (not in history)
//	Dropped                                 events a subscriber missed
//
// Each embeds a Header (Server, Time, Seq), has String() for a human and
// MarshalJSON for a machine: snake_case, with "seq", "type", "server",
// "time" and the event's own fields ({"type":"state_changed","from":…}).
// Fields are plain strings, numbers and times (and ServerInfo, made of
// strings), scrubbed of secrets and bounded by whoever emits them;
// nothing in this package can carry a token.
//
// # Emitting
//
// A Runtime owns one Bus. The status board is its Reducer: it sees every
// event, in order, before Emit returns.
//
//	bus := events.NewBus(&events.Options{Reducer: board.Apply}) // Apply returns the event, completed
//	defer bus.Close()
//	bus.Emit(events.StateChanged{Header: events.Header{Server: "fs"}, From: "starting", To: "ready"})
//
// Emit never waits for a subscriber, so an actor that emits is never
// slowed by a host that does not read.
//
// # Subscribing
//
//	sub := bus.Subscribe(events.SubscribeOptions{Server: "fs", From: lastSeen + 1})
//	defer sub.Close()
//	for {
//		e, err := sub.Next(ctx)
//		if err != nil {
//			return err // ctx's error, or ErrClosed
//		}
//		switch e := e.(type) {
//		case events.Dropped:
//			// e.N events are gone: re-read Status() to catch up.
//		case events.StateChanged:
//			fmt.Println(e.From, "->", e.To)
//		}
//	}
//
// Each subscription has a bounded buffer. One that falls behind misses
// events and, once it has read what it holds, gets one Dropped{N} in their
// place. The Bus keeps the last lifecycle events (not ServerLog, not
// RequestRefused, not ResourceUpdated, not StartingOutput) so that a subscriber can start From a sequence number;
// one that asks for more than is kept gets a Dropped first. A resumed
// subscriber learns a server's count of refused requests from Status
// (requests_refused), not from the history.
package events
