package testutil

import (
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// OtherLoopback serves h on 127.0.0.2, a loopback address other than the
// 127.0.0.1 that test servers use (Linux routes all of 127.0.0.0/8 to
// lo), standing for a service elsewhere on the machine. It returns the
// server's URL and the count of connections it accepted; the server is
// closed when the test ends.
func OtherLoopback(t *testing.T, h http.Handler) (string, *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatalf("listening on 127.0.0.2 (loopback /8): %v", err)
	}
	conns := &atomic.Int32{}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL, conns
}
