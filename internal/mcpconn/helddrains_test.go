package mcpconn

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/internal/exampleserver"
	"github.com/openprogram/mcpvisor/internal/testutil"
)

// holdingServer serves the example server over Streamable HTTP but keeps
// each tools/call's stream open after the answer, until the client ends
// the request. It counts the requests held now and the most held at once.
func holdingServer(t *testing.T) (url string, holding, most *atomic.Int64) {
	server := exampleserver.NewServer(exampleserver.Options{Stderr: discard{}})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	holding, most = &atomic.Int64{}, &atomic.Int64{}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
		if r.Method != http.MethodPost || !bytes.Contains(body, []byte(`"tools/call"`)) {
			return
		}
		w.(http.Flusher).Flush()
		n := holding.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		<-r.Context().Done() // the client ended the request
		holding.Add(-1)
	}))
	t.Cleanup(ts.Close)
	return ts.URL, holding, most
}

// A server that keeps every call's stream open after answering costs at
// most maxHeldDrains requests held in their grace: the calls beyond are
// cancelled at once (with a grace of an hour, the held ones stay until
// Close).
func TestHeldDrainsAreBounded(t *testing.T) {
	url, holding, most := holdingServer(t)
	var work sync.WaitGroup
	defer work.Wait()
	c, err := testDial(context.Background(), Options{Server: config.Server{Name: "h", Type: config.TypeHTTP, URL: url, Enabled: true}, Go: work.Go, answeredGrace: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for range 3 * maxHeldDrains {
		if _, err := c.CallTool(t.Context(), "echo", map[string]any{"text": "x"}); err != nil {
			t.Fatal(err)
		}
	}
	// The server sees the ones over the cap end (it may see a few late:
	// the end of a request reaches it when its socket closes).
	testutil.Eventually(t, wait, "the streams over the cap to end", func() bool { return holding.Load() <= maxHeldDrains })
	t.Logf("at most %d streams held at once; %d held now", most.Load(), holding.Load())
	c.Close()
	testutil.Eventually(t, wait, "Close to end the held streams", func() bool { return holding.Load() == 0 })
}

// The held streams end when the grace runs out, without a Close: within
// the grace and a margin for a loaded machine.
func TestHeldDrainsEndWithTheGrace(t *testing.T) {
	url, holding, _ := holdingServer(t)
	var work sync.WaitGroup
	defer work.Wait()
	c, err := testDial(context.Background(), Options{Server: config.Server{Name: "h", Type: config.TypeHTTP, URL: url, Enabled: true}, Go: work.Go})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for range 3 {
		if _, err := c.CallTool(t.Context(), "echo", map[string]any{"text": "x"}); err != nil {
			t.Fatal(err)
		}
	}
	answered := time.Now()
	testutil.Eventually(t, answeredGrace+5*time.Second, "the held streams to end", func() bool { return holding.Load() == 0 })
	t.Logf("the held streams ended %v after the last answer", time.Since(answered))
}

// The link of each answered request takes a place among the held drains
// until its release or its grace's end; past maxHeldDrains it is cancelled
// at once.
func TestRequestLinkHoldsAtMostMaxHeldDrains(t *testing.T) {
	rt, _ := newCutTransport(http.DefaultTransport)
	ct := rt.(*cutTransport)
	held := func() int {
		ct.mu.Lock()
		defer ct.mu.Unlock()
		return ct.held
	}
	var links []*requestLink
	var ctxs []context.Context
	for range maxHeldDrains + 2 {
		parent, end := context.WithCancelCause(context.Background())
		ctx, l := linkRequest(parent, ct)
		end(errRequestOver)
		links, ctxs = append(links, l), append(ctxs, ctx)
	}
	// Each link's parentEnded runs on its own goroutine: which ones are
	// held is theirs to decide, but no more than maxHeldDrains.
	cancelled := func() (n int) {
		for _, ctx := range ctxs {
			if ctx.Err() != nil {
				n++
			}
		}
		return n
	}
	testutil.Eventually(t, wait, "every link held or cancelled", func() bool { return held()+cancelled() == len(links) })
	if n := held(); n != maxHeldDrains {
		t.Fatalf("%d links are held, want %d", n, maxHeldDrains)
	}
	for i := range links { // release a held one
		if ctxs[i].Err() == nil {
			links[0], links[i] = links[i], links[0]
			break
		}
	}
	links[0].release()
	if n := held(); n != maxHeldDrains-1 {
		t.Fatalf("after a release %d links are held, want %d", n, maxHeldDrains-1)
	}
	// Its place is free for the next answered request.
	parent, end := context.WithCancelCause(context.Background())
	ctx, l := linkRequest(parent, ct)
	end(errRequestOver)
	testutil.Eventually(t, wait, "the new link held", func() bool { return held() == maxHeldDrains })
	if ctx.Err() != nil {
		t.Fatal("a link in a freed place was cancelled")
	}
	for _, l := range append(links, l) {
		l.release()
	}
	if n := held(); n != 0 {
		t.Fatalf("after every release %d links are held, want 0", n)
	}
}

// A request's context keeps its caller's deadline (the transport bounds a
// dial by it) but not its cancellation.
func TestRequestLinkKeepsTheDeadline(t *testing.T) {
	rt, _ := newCutTransport(http.DefaultTransport)
	want := time.Now().Add(time.Hour)
	parent, cancel := context.WithDeadline(context.Background(), want)
	ctx, l := linkRequest(parent, rt.(*cutTransport))
	defer l.release()
	if got, ok := ctx.Deadline(); !ok || !got.Equal(want) {
		t.Fatalf("Deadline = %v, %v; want %v", got, ok, want)
	}
	type key struct{}
	if ctx.Value(key{}) != nil {
		t.Fatal("a value from nowhere")
	}
	cancel()
	<-ctx.Done() // not answered: cancelled with its caller
}
