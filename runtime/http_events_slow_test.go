package runtime

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/testutil"
)

// A client that stops reading: the server's send buffer (and, where the
// client is never to read again, the client's receive buffer) is made
// small, as the kernel would otherwise let many MiB through before the
// stream's writes block. (A small receive buffer on a client that does
// read later makes it slow, ACK by delayed ACK.)

// smallSocketBuffer is the size asked for those buffers.
const smallSocketBuffer = 16 << 10

// smallSendBuffers makes the server's sockets small (before it starts).
func smallSendBuffers(ts *httptest.Server) { ts.Listener = smallSendListener{ts.Listener} }

// smallReadBuffers makes the test client's sockets small (after the
// server started).
func smallReadBuffers(ts *httptest.Server) *httptest.Server {
	dial := (&net.Dialer{}).DialContext
	ts.Client().Transport.(*http.Transport).DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetReadBuffer(smallSocketBuffer)
		}
		return c, err
	}
	return ts
}

type smallSendListener struct{ net.Listener }

func (l smallSendListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(smallSocketBuffer)
	}
	return c, err
}

// bigLog is a server log line of its own 32 KiB (each one a separate
// allocation, so that holding them would show in the heap).
func bigLog(i int) events.ServerLog {
	return events.ServerLog{Header: events.Header{Server: "fs"}, Level: "info", Text: strings.Repeat(string(rune('a'+i%26)), 32<<10)}
}

func heapAlloc() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestEventsSlowClient: a client that does not read while 3000 events of
// 32 KiB (96 MiB) go by holds only the subscription's bounded buffer, and
// when it reads again gets a dropped event for what it missed: every
// event is either delivered or counted.
func TestEventsSlowClient(t *testing.T) {
	// Not the test log buffer: it would keep every line the log writes.
	rt := start(t, Options{Logger: slog.New(slog.DiscardHandler)})
	c := openEvents(t, eventsServer(t, rt.Runtime, smallSendBuffers), "/api/mcp/events?server=fs", nil)
	waitOpen(t, rt.Runtime, 1)
	const n = 3000
	before := heapAlloc()
	for i := range n {
		rt.bus.Emit(bigLog(i))
		if i%100 == 99 {
			// The runtime's own log subscriber reads at its own pace and
			// may hold up to its buffer (logSubBuffer events); let it catch
			// up so that what is measured is the stream's subscription.
			seq := rt.bus.LastSeq()
			testutil.Eventually(t, 10*time.Second, "the log subscriber caught up", func() bool { return rt.logged.Load() >= seq })
		}
	}
	// The buffer holds at most events.DefaultBuffer (256) of them, 8 MiB.
	if grew := int64(heapAlloc()) - int64(before); grew > 32<<20 {
		t.Errorf("the heap grew by %d MiB while a client did not read, want at most the subscription's buffer", grew>>20)
	}
	last := rt.bus.LastSeq()
	var delivered, dropped, gaps uint64
	for {
		f := c.read(t, 1)[0]
		switch f.typ {
		case "dropped":
			gaps++
			dropped += uint64(f.num("n"))
		case "server_log":
			delivered++
		default:
			t.Fatalf("unexpected frame %s", f.raw)
		}
		if uint64(f.num("seq")) == last {
			break
		}
	}
	if gaps == 0 || delivered+dropped != n {
		t.Errorf("%d delivered, %d dropped in %d gaps; want a gap and %d in all", delivered, dropped, gaps, n)
	}
}

// TestEventsNeverReadingClientCutOff: a client that never reads is cut
// off once a frame has waited for its socket longer than the write
// bound, and its stream (with its subscription) ends.
func TestEventsNeverReadingClientCutOff(t *testing.T) {
	rt := start(t, Options{})
	rt.stream.writeBound = 100 * time.Millisecond
	openEvents(t, smallReadBuffers(eventsServer(t, rt.Runtime, smallSendBuffers)), "/api/mcp/events", nil)
	waitOpen(t, rt.Runtime, 1)
	for i := range 200 { // 6 MiB: far more than both sockets hold
		rt.bus.Emit(bigLog(i))
	}
	waitOpen(t, rt.Runtime, 0)
}
