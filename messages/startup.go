package messages

// Startup: the manager connects enabled servers one after another in file
// order. It sends StartServer to one server actor and waits for its
// ServerSettled before it starts the next. The manager's mailbox never
// waits: the wait is just "the next server is not started yet".

// StartServer tells a server actor that its turn in startup has come: it
// spawns its session now. Sent by the manager to its child.
type StartServer struct{}

// ServerSettled tells the manager that a server's first connect attempt
// finished (ready or failed), or that there was nothing to start (disabled,
// invalid config). Sent by the server actor to its parent, once per
// StartServer.
type ServerSettled struct {
	Name  string
	Ready bool
}
