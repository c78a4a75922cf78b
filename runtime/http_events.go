package runtime

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/openprogram/mcpvisor/events"
)

// GET /api/mcp/events is the runtime's event stream as Server-Sent Events.
// Each event is one frame:
//
//	id: <boot>-<seq>
//	event: <type>
//	data: {"boot":"<boot>","seq":<seq>,"type":"<type>","server":"<name>","time":"…",<the event's fields>}
//
// (the data is the event's own JSON with "boot" in front, on one line).
// A frame goes out as soon as its event is read, and a comment
// (": keepalive") after 15 s without a frame keeps proxies and browsers
// from closing an idle stream.
//
// Resuming: the Last-Event-ID header, or the last_event_id query parameter
// for a client that cannot set headers (the header wins, as a browser's
// EventSource sends it on reconnect while the URL keeps its first value).
// An id of this instance resumes right after it from the history; an id of
// another instance (a console that followed the runtime before it was
// restarted) or one that does not parse gets a dropped event with n 0 (the
// number is not known: those events are gone with that instance) and id
// "<boot>-0", and then everything this instance still holds, from its
// first event, so that the console can catch up on a life of the runtime
// it has not seen. Without an id the stream starts with the next event.
// ?server=NAME keeps one server's events. HEAD answers the stream's
// headers (200, text/event-stream) and no stream.
//
// A client that reads too slowly gets a dropped event for what it missed
// (the subscription's buffer is bounded), and one whose connection has
// not taken a frame within 10 s of its writing is cut off, so that neither
// holds memory or a goroutine.
// The stream ends when the client goes away and when the runtime has shut
// down (after the last event). Once Shutdown has begun the route answers
// 503 (ErrShuttingDown), which stops an EventSource's reconnecting. At
// most 64 streams are served at once; one more gets 503. Behind a host's
// wrapper of the ResponseWriter that http.ResponseController cannot flush
// or give a write deadline (one without Unwrap) the route answers 500.
//
// The route sets its own write deadline for each frame (10 s) and, between
// frames, one that covers the wait for the next (15 s + 10 s); the
// connection's WriteTimeout does not cut it. Browsers may open it only from the API's
// own origin (see eventsOriginOK).

// Defaults of eventStream.
const (
	defaultKeepalive       = 15 * time.Second
	defaultEventWriteBound = 10 * time.Second
	defaultMaxEventStreams = 64
)

// lastEventIDParam is the query parameter that stands for the
// Last-Event-ID header.
const lastEventIDParam = "last_event_id"

// eventStream holds the event route's timings (zero: the default; tests
// shorten them) and counts the streams being served.
type eventStream struct {
	// keepalive is the period of the comment frame; default
	// defaultKeepalive.
	keepalive time.Duration
	// writeBound is how long one frame may take to write; default
	// defaultEventWriteBound.
	writeBound time.Duration
	// most is how many streams may be served at once (each one is offered
	// every event under the bus's lock); default defaultMaxEventStreams.
	most int64
	// open is the number of streams being served.
	open atomic.Int64
	// changed, when set (by a test, before serving), gets a token
	// whenever open changes.
	changed chan struct{}
}

func (s *eventStream) add(n int64) {
	s.open.Add(n)
	if s.changed != nil {
		select {
		case s.changed <- struct{}{}:
		default:
		}
	}
}

func (s *eventStream) limit() int64 {
	if s.most <= 0 {
		return defaultMaxEventStreams
	}
	return s.most
}

// admit counts one more stream being served, unless most are.
func (s *eventStream) admit(most int64) bool {
	for {
		n := s.open.Load()
		if n >= most {
			return false
		}
		if s.open.CompareAndSwap(n, n+1) {
			s.add(0) // tells a test
			return true
		}
	}
}

// canFlush reports whether http.ResponseController can flush w: it finds
// a Flusher (or FlushError) through Unwrap, as the controller does.
func canFlush(w http.ResponseWriter) bool {
	for {
		switch t := w.(type) {
		case http.Flusher, interface{ FlushError() error }:
			return true
		case interface{ Unwrap() http.ResponseWriter }:
			w = t.Unwrap()
		default:
			return false
		}
	}
}

func (s *eventStream) timings() (keepalive, writeBound time.Duration) {
	keepalive, writeBound = s.keepalive, s.writeBound
	if keepalive <= 0 {
		keepalive = defaultKeepalive
	}
	if writeBound <= 0 {
		writeBound = defaultEventWriteBound
	}
	return keepalive, writeBound
}

func (r *Runtime) handleEvents(w http.ResponseWriter, req *http.Request) error {
	if err := eventsOriginOK(req); err != nil {
		return err
	}
	select {
	case <-r.stopWatch: // a stream now would end at once: a 503 tells an EventSource to stop reconnecting
		return ErrShuttingDown
	default:
	}
	if req.Method == http.MethodHead {
		// The GET pattern matches HEAD, whose body net/http discards: a
		// stream would never block on a write, so it would hold its
		// goroutine and subscription until Shutdown.
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		return nil
	}
	opts := events.SubscribeOptions{Server: req.URL.Query().Get("server")}
	id := req.Header.Get("Last-Event-ID")
	if id == "" {
		id = req.URL.Query().Get(lastEventIDParam)
	}
	var foreign bool // the id is not one of this instance's
	if id != "" {
		if seq, ok := r.ownSeq(id); ok {
			opts.From = seq + 1
		} else {
			foreign, opts.From = true, 1
		}
	}
	keepalive, writeBound := r.stream.timings()
	rc := http.NewResponseController(w)
	if rc.SetWriteDeadline(time.Now().Add(writeBound)) != nil || !canFlush(w) {
		// Without them a client that stops reading would hold its stream
		// for good.
		return &apiError{Status: http.StatusInternalServerError,
			Message: "the event stream needs a response writer that flushes and takes write deadlines (through http.ResponseController: a wrapper must have an Unwrap method)"}
	}
	if most := r.stream.limit(); !r.stream.admit(most) {
		return &apiError{Status: http.StatusServiceUnavailable,
			Message: fmt.Sprintf("too many event streams: at most %d are served at once", most)}
	}
	defer r.stream.add(-1)
	sub := r.Subscribe(opts)
	defer sub.Close()

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no") // a buffering proxy would hold the frames back
	w.WriteHeader(http.StatusOK)
	out := frameWriter{bw: bufio.NewWriter(w), rc: rc, bound: writeBound, idle: keepalive + writeBound, boot: r.boot}
	if err := out.flush(); err != nil {
		return nil // the client is gone; nothing more can be answered
	}
	if foreign {
		gap := events.Dropped{Header: events.Header{Server: opts.Server, Time: r.opts.clock.Now()}} // the bus's clock
		if out.event(gap) != nil {
			return nil
		}
	}
	ctx := req.Context()
	for {
		wait, cancel := context.WithTimeout(ctx, keepalive)
		e, err := sub.Next(wait)
		cancel()
		switch {
		case err == nil:
			err = out.event(e)
		case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
			err = out.comment("keepalive")
		default: // the client went away, or the runtime shut down
			return nil
		}
		if err != nil {
			return nil // a write failed or took longer than its bound
		}
	}
}

// ownSeq parses an event id of this instance: "<boot>-<seq>".
func (r *Runtime) ownSeq(id string) (uint64, bool) {
	boot, seq, ok := strings.Cut(id, "-")
	if !ok || boot != r.boot {
		return 0, false
	}
	n, err := strconv.ParseUint(seq, 10, 64)
	return n, err == nil
}

// eventsOriginOK refuses a browser's cross-origin request for the stream.
// The API's CrossOriginProtection guards only writes, and a GET's answer
// is kept from another origin's script by CORS anyway; the stream is
// refused outright because it is long-lived (a page could hold streams
// open) and tells what goes on. It applies the same checks as the writes'
// guard (Sec-Fetch-Site, else Origin against Host), with the same message.
func eventsOriginOK(req *http.Request) error {
	probe := *req
	probe.Method = http.MethodPost // CrossOriginProtection checks only unsafe methods
	if http.NewCrossOriginProtection().Check(&probe) != nil {
		return &apiError{Status: http.StatusForbidden,
			Message: "cross-origin request refused: the event stream is served only to non-browser clients or the API's own origin"}
	}
	return nil
}

// frameWriter writes SSE frames, each within its own write deadline, and
// flushes after each.
type frameWriter struct {
	bw    *bufio.Writer
	rc    *http.ResponseController
	bound time.Duration
	// idle is the deadline kept between frames: the next one (an event or
	// the keepalive) is written within keepalive, and takes bound.
	idle time.Duration
	boot string
}

func (f frameWriter) event(e events.Event) error {
	data, err := e.MarshalJSON()
	if err != nil {
		return fmt.Errorf("encoding event %d: %w", e.Head().Seq, err)
	}
	if len(data) < 2 || data[0] != '{' {
		return fmt.Errorf("encoding event %d: not a JSON object", e.Head().Seq)
	}
	f.deadline()
	// The event's JSON is an object: "boot" goes in front of its members,
	// so nothing is encoded twice. The boot id is base32 (no escaping).
	h := e.Head()
	f.bw.WriteString("id: " + f.boot + "-" + strconv.FormatUint(h.Seq, 10) + "\n")
	f.bw.WriteString("event: " + e.Type() + "\n")
	f.bw.WriteString(`data: {"boot":"` + f.boot + `",`)
	f.bw.Write(data[1:]) // json.Marshal escapes newlines: one data line
	f.bw.WriteString("\n\n")
	return f.flush()
}

func (f frameWriter) comment(text string) error {
	f.deadline()
	f.bw.WriteString(": " + text + "\n\n")
	return f.flush()
}

// deadline gives the next frame its write bound. A write that cannot
// finish by then (a client that stopped reading, its socket buffers full)
// fails, and the stream ends.
func (f frameWriter) deadline() {
	_ = f.rc.SetWriteDeadline(time.Now().Add(f.bound)) // a writer without deadlines: served without
}

// flush sends the frame, asks the server to push it out, and moves the
// deadline past the wait for the next frame: over HTTP/2 a passed write
// deadline resets the stream even with no write pending, and over HTTP/1
// the end of the stream (at Shutdown) is written after an idle time.
func (f frameWriter) flush() error {
	if err := f.bw.Flush(); err != nil {
		return err
	}
	if err := f.rc.Flush(); err != nil {
		return err
	}
	_ = f.rc.SetWriteDeadline(time.Now().Add(f.idle))
	return nil
}
