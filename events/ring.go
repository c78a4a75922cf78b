package events

// ring is a FIFO of events with a fixed capacity, so that a history or a
// subscriber's buffer holds at most that many however many events pass.
type ring struct {
	buf        []Event
	head, size int
}

func newRing(capacity int) ring { return ring{buf: make([]Event, capacity)} }

func (r *ring) len() int   { return r.size }
func (r *ring) full() bool { return r.size == len(r.buf) }

// push appends e; when the ring is full it evicts and returns the oldest
// event.
func (r *ring) push(e Event) (evicted Event) {
	if r.full() {
		evicted = r.pop()
	}
	r.buf[(r.head+r.size)%len(r.buf)] = e
	r.size++
	return evicted
}

// pop removes and returns the oldest event; nil when empty.
func (r *ring) pop() Event {
	if r.size == 0 {
		return nil
	}
	e := r.buf[r.head]
	r.buf[r.head] = nil // let the event go
	r.head = (r.head + 1) % len(r.buf)
	r.size--
	return e
}

// at returns the i-th oldest event.
func (r *ring) at(i int) Event { return r.buf[(r.head+i)%len(r.buf)] }
