package messages

import "errors"

// Requests: a message that expects an answer carries its reply path in
// its Reply field, a channel the sender makes with room for exactly one
// answer. The receiver answers exactly once and never blocks on it; a
// sender that gave up (its ctx ended) simply never reads the answer.
// No request between actors goes through a future: the channel shows in
// the struct how it is answered, a sender's wait is bounded by its own
// ctx rather than a fixed future timeout, and two actors can never end up
// waiting on each other.

// Request is a message that carries its own reply path. Fail answers it
// with err instead of a result: a receiver that cannot carry a request
// out (it is stopping, or has no case for it) fails it, so nothing waits
// for an answer that never comes.
type Request interface {
	Fail(err error)
}

// ManagerRequest is a request the manager answers: AddServer,
// PatchServer, RemoveServer, RestartServer and Reload (manage.go), Kill
// and Describe (describe.go). The set is closed: only this package's
// types are ManagerRequests, and the manager has a case for each.
type ManagerRequest interface {
	Request
	managerRequest()
}

// ErrUnhandled: the receiver has no case for the message, a bug; it is
// logged with the message's type.
var ErrUnhandled = errors.New("message not handled by its receiver (a bug)")

func (AddServer) managerRequest()     {}
func (PatchServer) managerRequest()   {}
func (RemoveServer) managerRequest()  {}
func (RestartServer) managerRequest() {}
func (Reload) managerRequest()        {}
func (Kill) managerRequest()          {}
func (Describe) managerRequest()      {}

// Fail answers the request with err.
func (m AddServer) Fail(err error) { m.Reply <- err }

// Fail answers the request with err.
func (m PatchServer) Fail(err error) { m.Reply <- err }

// Fail answers the request with err.
func (m RemoveServer) Fail(err error) { m.Reply <- err }

// Fail answers the request with err.
func (m RestartServer) Fail(err error) { m.Reply <- err }

// Fail answers the request with err.
func (m Reload) Fail(err error) { m.Reply <- ReloadResult{Err: err} }

// Fail answers the request with err.
func (m Kill) Fail(err error) { m.Reply <- err }

// Fail answers the request with a description that says why there is
// none.
func (m Describe) Fail(err error) { m.Reply <- Description{Err: err} }
