package mcpconn

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/internal/exampleserver"
	"github.com/openprogram/mcpvisor/tools"
)

// testInterval is the keepalive interval of these tests; lostMargin is the
// scheduling slack allowed beyond the promised two intervals on a loaded
// two-core machine.
const (
	testInterval = 200 * time.Millisecond
	lostMargin   = time.Second
)

// pins are the protocol versions keepalive is tested on: the example
// server's default (2026-07-28, probed with server/discover) and a
// protocol_version pin to 2025-11-25 (probed with ping).
var pins = []struct{ pin, want, probe string }{
	{"", "2026-07-28", "server/discover"},
	{"2025-11-25", "2025-11-25", "ping"},
}

// freezeServer is the example server with its freeze and probes tools,
// pinned to pin.
func freezeServer(pin string) Options {
	srv := server(demoBin, "serve", "-freeze-tool")
	srv.ProtocolVersion = pin
	return Options{Server: srv, Grace: 200 * time.Millisecond}
}

// probesSeen asks the example server how many probes it received.
func probesSeen(t *testing.T, c *Conn) (ping, discover int) {
	t.Helper()
	res, err := c.CallTool(context.Background(), exampleserver.ProbesToolName, map[string]any{})
	if err != nil || res.IsError || len(res.Content) != 1 {
		t.Fatalf("probes: %v %+v", err, res)
	}
	var n struct{ Ping, Discover int }
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &n); err != nil {
		t.Fatal(err)
	}
	return n.Ping, n.Discover
}

// awaitLost waits for c to be declared lost, and checks it was within
// want (plus lostMargin) of since.
func awaitLost(t *testing.T, c *Conn, since time.Time, want time.Duration, what string) {
	t.Helper()
	select {
	case <-c.Done():
	case <-time.After(10 * time.Second):
		t.Fatalf("%s was not declared lost", what)
	}
	if took := time.Since(since); took > want+lostMargin {
		t.Errorf("%s was declared lost after %v, want within %v", what, took, want)
	}
}

// A pinned protocol_version is the version the session negotiates; the
// example server otherwise speaks 2026-07-28.
func TestProtocolVersionPin(t *testing.T) {
	for _, p := range pins {
		c, err := testDial(context.Background(), freezeServer(p.pin))
		if err != nil {
			t.Fatal(err)
		}
		got := c.cs.InitializeResult().ProtocolVersion
		c.Close()
		if got != p.want {
			t.Errorf("pin %q: negotiated %q, want %q", p.pin, got, p.want)
		}
		if c.probeName() != p.probe {
			t.Errorf("pin %q: probed with %q, want %q", p.pin, c.probeName(), p.probe)
		}
	}
	assertNoProcesses(t)
}

// A server that stops answering while its process runs (a deadlock), with
// no request in flight, is found by the probe within two intervals on
// both protocol versions: its session ends with ErrUnresponsive and no
// process is left. (With calls in flight it may be busy on them: see
// TestKeepAliveFindsADeadlockUnderCalls.)
func TestKeepAliveFindsADeadlock(t *testing.T) {
	for _, p := range pins {
		t.Run(p.want, func(t *testing.T) {
			opts := freezeServer(p.pin)
			opts.KeepAlive = testInterval
			c, err := testDial(context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := c.CallTool(context.Background(), exampleserver.FreezeToolName, map[string]any{}); err != nil {
				t.Fatal(err)
			}
			awaitLost(t, c, time.Now(), 2*testInterval, "a frozen server")
			if err := c.Err(); !errors.Is(err, tools.ErrUnresponsive) || !strings.Contains(err.Error(), p.probe) {
				t.Errorf("Err = %v, want ErrUnresponsive naming %s", err, p.probe)
			}
			c.Close()
			assertNoProcesses(t)
		})
	}
}

// Probes run beside calls: a call far longer than two intervals on a
// healthy server is not taken for a hang and is answered, while probes of
// the session's kind reach the server. With keepalive off, none does.
func TestKeepAliveProbesBesideCallsOrNotAtAll(t *testing.T) {
	const slowCall = 5 * testInterval
	for _, p := range pins {
		for _, on := range []bool{true, false} {
			opts := freezeServer(p.pin)
			if on {
				opts.KeepAlive = testInterval
			}
			c, err := testDial(context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			res, err := c.CallTool(context.Background(), "sleep", map[string]any{"ms": slowCall.Milliseconds()})
			if err != nil || res.IsError {
				t.Fatalf("%s on=%v: a slow call on a healthy server: %v %+v", p.want, on, err, res)
			}
			ping, discover := probesSeen(t, c)
			c.Close()
			probes := ping
			if p.probe == "server/discover" {
				probes = discover - 1 // the session's own first one
			}
			switch {
			case on && probes < 2:
				t.Errorf("%s: %d probes (ping %d, discover %d) during a %v call, want ≥ 2", p.want, probes, ping, discover, slowCall)
			case !on && (ping != 0 || probes != 0):
				t.Errorf("%s, keepalive off: ping %d, discover %d, want no probe", p.want, ping, discover)
			}
		}
	}
	assertNoProcesses(t)
}
