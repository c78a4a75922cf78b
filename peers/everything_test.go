//go:build unix

package peers_test

import (
	"bytes"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/tools"
)

// alwaysTools are the registry names of the 12 tools server-everything
// offers whatever the client's capabilities: "{server}__{tool}", with the
// '-' of the tool names kept.
var alwaysTools = []string{
	"everything__echo",
	"everything__get-annotated-message",
	"everything__get-env",
	"everything__get-resource-links",
	"everything__get-resource-reference",
	"everything__get-structured-content",
	"everything__get-sum",
	"everything__get-tiny-image",
	"everything__gzip-file-as-resource",
	"everything__toggle-simulated-logging",
	"everything__toggle-subscriber-updates",
	"everything__trigger-long-running-operation",
}

// everythingServer configures server-everything on transport as the one
// server "everything" of a runtime. The SSE and Streamable HTTP servers are
// started here, before the runtime, so that the runtime (whose cleanup
// runs first) ends its streams before the server is stopped; keep lists
// their pids.
func everythingServer(t *testing.T, transport string) (srv config.Server, keep []int) {
	t.Helper()
	srv = config.Server{Name: "everything", Enabled: true}
	switch transport {
	case "stdio":
		srv.Type = config.TypeLocal
		srv.Command = []string{"node", everythingJS, "stdio"}
		srv.Env = map[string]string{testutil.MarkerEnv: marker}
		return srv, nil
	case "sse":
		hs := startHTTPServer(t, transport)
		assertLoopbackOnly(t, hs)
		srv.Type, srv.URL = config.TypeSSE, hs.URL("/sse")
		return srv, []int{hs.PID}
	case "streamableHttp":
		hs := startHTTPServer(t, transport)
		assertLoopbackOnly(t, hs)
		srv.Type, srv.URL = config.TypeHTTP, hs.URL("/mcp")
		return srv, []int{hs.PID}
	}
	t.Fatalf("unknown transport %q", transport)
	return
}

// The official server-everything through the runtime on every transport:
// it becomes ready, its tools are registered under namespaced names, and
// text, image and embedded-resource results come back converted.
func TestEverything(t *testing.T) {
	for _, transport := range []string{"stdio", "sse", "streamableHttp"} {
		t.Run(transport, func(t *testing.T) {
			srv, keep := everythingServer(t, transport)
			rt := startRuntime(t, keep, srv)
			rt.waitReady(t, "everything")
			list := rt.waitTools(t, alwaysTools)
			t.Logf("%s: %d tools: %s", transport, len(list), strings.Join(toolNames(list), " "))
			for _, tl := range list {
				if tl.Server != "everything" || tl.Name != "everything__"+tl.OriginalName || len(tl.InputSchema) == 0 {
					t.Errorf("tool %+v: want server %q, name everything__<original>, an input schema", tl, "everything")
				}
			}

			t.Run("echo", func(t *testing.T) {
				res := rt.call(t, "everything__echo", map[string]any{"message": "hi"})
				if len(res.Content) != 1 || res.Content[0].Type != tools.ContentText || !strings.Contains(res.Content[0].Text, "hi") {
					t.Fatalf("echo = %+v, want one text block containing %q", res, "hi")
				}
			})

			t.Run("get-tiny-image", func(t *testing.T) {
				res := rt.call(t, "everything__get-tiny-image", map[string]any{})
				var images []tools.Content
				for _, c := range res.Content {
					if c.Type == tools.ContentImage {
						images = append(images, c)
					}
				}
				if len(images) != 1 {
					t.Fatalf("get-tiny-image = %+v, want one image block", res)
				}
				img := images[0]
				if img.MIMEType != "image/png" || !bytes.HasPrefix(img.Data, []byte("\x89PNG\r\n\x1a\n")) {
					t.Fatalf("image block: mime %q, %d bytes starting %q; want image/png with PNG data",
						img.MIMEType, len(img.Data), img.Data[:min(8, len(img.Data))])
				}
			})

			t.Run("get-resource-reference", func(t *testing.T) {
				for _, c := range []struct{ kind, uri string }{
					{"Text", "demo://resource/dynamic/text/1"},
					{"Blob", "demo://resource/dynamic/blob/1"},
				} {
					res := rt.call(t, "everything__get-resource-reference", map[string]any{"resourceType": c.kind, "resourceId": 1})
					want := "[resource: " + c.uri + "]"
					found := false
					for _, block := range res.Content {
						if block.Type == tools.ContentText && strings.HasPrefix(block.Text, "[resource: ") {
							found = true
							if block.Text != want {
								t.Errorf("%s resource block = %q, want %q", c.kind, block.Text, want)
							}
						}
					}
					if !found {
						t.Errorf("%s: get-resource-reference = %+v, want a text block %q", c.kind, res, want)
					}
				}
			})
		})
	}
}

// assertLoopbackOnly checks that a test server listens on 127.0.0.1 only:
// every listening socket of its process is bound to a loopback address.
func assertLoopbackOnly(t *testing.T, hs *httpServer) {
	t.Helper()
	if len(hs.Listeners) == 0 {
		t.Fatalf("pid %d has no listening socket", hs.PID)
	}
	for _, a := range hs.Listeners {
		if !a.Addr().IsLoopback() {
			t.Fatalf("pid %d listens on %v, want loopback only (all: %v)", hs.PID, a, hs.Listeners)
		}
	}
}

// The loopback preload binds server-everything's Express listen (which
// names no host) to 127.0.0.1: the process's only listening socket is
// 127.0.0.1:PORT, a dial there works, and a dial to any of the machine's
// other addresses on that port is refused.
func TestLoopbackPreload(t *testing.T) {
	hs := startHTTPServer(t, "streamableHttp")
	want := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(hs.Port))
	if len(hs.Listeners) != 1 || hs.Listeners[0] != want {
		t.Fatalf("pid %d listens on %v, want only %v", hs.PID, hs.Listeners, want)
	}
	conn, err := net.DialTimeout("tcp", want.String(), 2*time.Second)
	if err != nil {
		t.Fatalf("dial %v: %v", want, err)
	}
	conn.Close()

	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatalf("interface addresses: %v", err)
	}
	tried := 0
	for _, a := range addrs {
		ipnet, ok := a.(*net.IPNet)
		if !ok || ipnet.IP.IsLoopback() || ipnet.IP.IsLinkLocalUnicast() {
			continue
		}
		target := net.JoinHostPort(ipnet.IP.String(), strconv.Itoa(hs.Port))
		tried++
		if conn, err := net.DialTimeout("tcp", target, 2*time.Second); err == nil {
			conn.Close()
			t.Errorf("dial %s succeeded: the server is reachable beyond loopback", target)
		}
	}
	if tried == 0 {
		t.Log("no non-loopback address on this machine; only the socket table was checked")
	}
}

// The /proc/net/tcp address decoding the loopback checks rely on.
func TestParseProcNetAddr(t *testing.T) {
	for in, want := range map[string]string{
		"0100007F:1F90":                         "127.0.0.1:8080",
		"00000000:0BB9":                         "0.0.0.0:3001",
		"00000000000000000000000000000000:0BB9": "[::]:3001",
		"00000000000000000000000001000000:0050": "[::1]:80",
		"0000000000000000FFFF00000100007F:0050": "[::ffff:127.0.0.1]:80",
	} {
		got, err := parseProcNetAddr(in)
		if err != nil || got.String() != want {
			t.Errorf("parseProcNetAddr(%q) = %v, %v; want %s", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "0100007F", "zz00007F:0050", "0100007F:zz", "01007F:0050"} {
		if _, err := parseProcNetAddr(bad); err == nil {
			t.Errorf("parseProcNetAddr(%q) succeeded", bad)
		}
	}
}
