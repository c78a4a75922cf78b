package main

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// getStreams signals on opened each time a standalone GET stream (the
// go-sdk client's server-to-client stream) got its 200.
type getStreams struct {
	once   sync.Once
	opened chan struct{}
}

func (g *getStreams) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err == nil && req.Method == http.MethodGet && resp.StatusCode == http.StatusOK {
		g.once.Do(func() { close(g.opened) })
	}
	return resp, err
}

// TestGatewayHTTPStopClosesSessions: stopping the HTTP gateway while a
// client holds its standalone GET stream open ends that stream at once
// (the sessions are closed), instead of waiting out httpShutdownGrace
// for a stream that would never end by itself.
func TestGatewayHTTPStopClosesSessions(t *testing.T) {
	rt, logger, logs := startEx(t)
	l, err := listenMCP("127.0.0.1:0", "")
	if err != nil {
		t.Fatal(err)
	}
	stop, err := l.serve(rt, logger)
	if err != nil {
		t.Fatal(err)
	}
	streams := &getStreams{opened: make(chan struct{})}
	g := connectClient(t, &mcp.StreamableClientTransport{Endpoint: "http://" + l.ln.Addr().String() + "/mcp",
		HTTPClient: &http.Client{Transport: streams}})
	defer g.Close()
	select {
	case <-streams.opened:
	case <-time.After(30 * time.Second):
		stop()
		t.Fatalf("the client never opened its GET stream\n%s", logs.String())
	}
	stopped := make(chan struct{})
	go func() { defer close(stopped); stop() }()
	select {
	case <-stopped:
	case <-time.After(httpShutdownGrace / 2):
		<-stopped
		t.Fatalf("stopping the gateway waited for the client's GET stream (httpShutdownGrace %v)", httpShutdownGrace)
	}
}
