package runtime

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/internal/exampleserver"
	"github.com/openprogram/mcpvisor/status"
)

// 100 clients of one gateway stay consistent through a burst of registry
// changes: each gets tools/list_changed and ends up listing exactly the
// registry's tools that the gateway's filter allows, and then all 100
// call at once, each getting its own answer, and none can call a
// filtered tool. (TestGatewayManyClients calls before a change; the
// benchmark of this, with times, is BenchmarkGatewayClients.)
func TestGatewayHundredClients(t *testing.T) {
	// Keepalive off: on 2026-07-28 its probe is a server/discover, which
	// the one-session check below counts.
	rt := start(t, Options{KeepAlive: -1}, exampleServer("ex"))
	rt.waitSettled(t, "ex")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	filter := GatewayFilter{Deny: []string{"*__fail"}}
	srv, err := rt.MCPServer(ctx, MCPServerOptions{Tools: filter})
	if err != nil {
		t.Fatal(err)
	}
	clients := make([]*gatewayClient, gatewayClients)
	for i := range clients {
		ct, st := mcp.NewInMemoryTransports()
		ss, err := srv.Connect(ctx, st, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = ss.Close() })
		clients[i] = dialGateway(t, ct)
	}
	for _, g := range clients {
		for len(g.toolsChanged) > 0 {
			<-g.toolsChanged
		}
	}

	// The burst: two servers added, one of them removed again (likely
	// before it is even ready).
	changes := rt.Registry().Subscribe()
	defer changes.Close()
	for _, name := range []string{"b", "c"} {
		if _, err := rt.AddServer(context.Background(), exampleServer(name, "-freeze-tool")); err != nil {
			t.Fatal(err)
		}
	}
	if err := rt.RemoveServer(context.Background(), "b"); err != nil {
		t.Fatal(err)
	}
	rt.waitSettled(t, "c")
	deadline := time.After(30 * time.Second)
	for {
		names := registryNames(rt.Runtime, GatewayFilter{})
		if slices.Contains(names, "c__echo") && !slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "b__") }) {
			break
		}
		select {
		case <-changes.C:
		case <-deadline:
			t.Fatalf("the registry never held c's tools without b's: %v", names)
		}
	}
	want := registryNames(rt.Runtime, filter)
	if slices.Contains(want, "c__fail") || !slices.Contains(want, "ex__echo") {
		t.Fatalf("the filtered registry is %v", want)
	}

	var wg sync.WaitGroup
	for i, g := range clients {
		wg.Go(func() {
			// Not t.Fatal: this is not the test's goroutine.
			if _, err := awaitNotified(g.toolsChanged); err != nil {
				t.Errorf("client %d: %v", i, err)
				return
			}
			if err := awaitList(g.ClientSession, g.toolsChanged, want); err != nil {
				t.Errorf("client %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	if got := registryNames(rt.Runtime, filter); !slices.Equal(got, want) {
		t.Fatalf("the registry moved on during the test: %v, was %v", got, want)
	}
	before := mustStatus(t, rt, "c")

	for i, g := range clients {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			text := fmt.Sprint("client ", i)
			res, err := g.CallTool(ctx, &mcp.CallToolParams{Name: "c__echo", Arguments: map[string]any{"text": text}})
			if err != nil || res.IsError || mcpText(res) != text {
				t.Errorf("client %d: c__echo = %+v, %v", i, res, err)
			}
			if _, err := g.CallTool(ctx, &mcp.CallToolParams{Name: "c__fail"}); err == nil || !strings.Contains(err.Error(), "unknown tool") {
				t.Errorf("client %d: the filtered c__fail answered %v, want an unknown tool error", i, err)
			}
		})
	}
	wg.Wait()
	// The 200 calls shared c's one upstream session: the same process,
	// never restarted, whose server saw one handshake (server/discover
	// on 2026-07-28; the runtime pins no older protocol here).
	if after := mustStatus(t, rt, "c"); after.PID != before.PID || after.Restarts != 0 || after.State != status.Ready {
		t.Errorf("c after the calls: %+v, was %+v: the calls did not share one session", after, before)
	}
	res := mustCall(t, rt, "c__"+exampleserver.ProbesToolName, map[string]any{})
	if got := res.Content[0].Text; got != `{"ping":0,"discover":1}` {
		t.Errorf("c's server saw %s, want one session handshake (discover 1)", got)
	}
}
