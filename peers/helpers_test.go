//go:build unix

package peers_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/runtime"
	"github.com/openprogram/mcpvisor/status"
	"github.com/openprogram/mcpvisor/tools"
)

// Bounds of every wait in these tests. Node starts in ~0.5 s here.
const (
	listenTimeout = 20 * time.Second // an HTTP server's port accepts connections
	readyTimeout  = 30 * time.Second // a server leaves "starting"
	toolsTimeout  = 10 * time.Second // the tool list settles after list_changed
	callTimeout   = 20 * time.Second // one tool call
	stopGrace     = 5 * time.Second  // SIGTERM, then SIGKILL, then give up
)

// httpServer is a server-everything the test started itself, for the SSE or
// Streamable HTTP transport.
type httpServer struct {
	Port      int
	PID       int
	Listeners []netip.AddrPort // the process's listening sockets
	output    *syncBuffer      // stdout and stderr
}

// URL is the server's endpoint for the transport it was started with.
func (s *httpServer) URL(path string) string {
	return fmt.Sprintf("http://127.0.0.1:%d%s", s.Port, path)
}

// startHTTPServer starts `node --import loopback.mjs dist/index.js transport`
// on a free 127.0.0.1 port in its own process group, and waits until the
// process listens there. It is stopped when the test ends (SIGTERM to the
// group, SIGKILL after stopGrace); register it before anything that must
// stop first, such as a runtime connected to it. A port taken between the
// pick and Node's bind is retried with another.
func startHTTPServer(t *testing.T, transport string) *httpServer {
	t.Helper()
	const attempts = 3
	for attempt := 1; ; attempt++ {
		srv, err := tryStartHTTPServer(t, transport)
		if err == nil {
			return srv
		}
		if !errors.Is(err, errPortTaken) || attempt == attempts {
			t.Fatalf("starting server-everything %s: %v", transport, err)
		}
		t.Logf("attempt %d: %v; retrying on another port", attempt, err)
	}
}

var errPortTaken = errors.New("the port was taken before node bound it")

func tryStartHTTPServer(t *testing.T, transport string) (*httpServer, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	out := &syncBuffer{}
	cmd := exec.Command("node", "--import", loopbackJS, everythingJS, transport)
	cmd.Dir = filepath.Dir(everythingJS)
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port), testutil.MarkerEnv+"="+marker)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = stopGrace // the output copiers end even if a pipe stays open
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	pid := cmd.Process.Pid
	done := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		stopGroup(t, pid, done)
		if t.Failed() {
			t.Logf("server-everything %s (pid %d) output:\n%s", transport, pid, out.String())
		}
	})

	// Nothing announces the listening socket: look until it answers, the
	// process exits or listenTimeout passes.
	var (
		srv    *httpServer
		failed error
		ls     []netip.AddrPort
	)
	listening := testutil.Within(listenTimeout, func() bool {
		select {
		case <-done:
			failed = fmt.Errorf("node exited before listening on port %d: %v\n%s", port, waitErr, out.String())
			if strings.Contains(out.String(), "EADDRINUSE") || strings.Contains(out.String(), "already in use") {
				failed = fmt.Errorf("%w (port %d): %v\n%s", errPortTaken, port, waitErr, out.String())
			}
			return true
		default:
		}
		var err error
		if ls, err = listenersOf(pid); err != nil {
			failed = err
			return true
		}
		if slices.ContainsFunc(ls, func(a netip.AddrPort) bool { return int(a.Port()) == port }) {
			conn, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), time.Second)
			if err == nil {
				conn.Close()
				srv = &httpServer{Port: port, PID: pid, Listeners: ls, output: out}
				return true
			}
		}
		return false
	})
	switch {
	case !listening:
		return nil, fmt.Errorf("node (pid %d) did not listen on 127.0.0.1:%d within %v; its listening sockets: %v\n%s",
			pid, port, listenTimeout, ls, out.String())
	case failed != nil:
		return nil, failed
	}
	return srv, nil
}

// stopGroup stops the process group led by pid: SIGTERM, then SIGKILL after
// stopGrace, and waits (bounded) for the leader to be reaped.
func stopGroup(t *testing.T, pid int, done <-chan struct{}) {
	t.Helper()
	select {
	case <-done:
		return
	default:
	}
	_ = syscall.Kill(-pid, syscall.SIGTERM)
	select {
	case <-done:
		return
	case <-time.After(stopGrace):
	}
	t.Logf("pid %d ignored SIGTERM for %v; sending SIGKILL", pid, stopGrace)
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	select {
	case <-done:
	case <-time.After(stopGrace):
		t.Errorf("pid %d still not reaped %v after SIGKILL", pid, stopGrace)
	}
}

// freePort returns a TCP port that was free on 127.0.0.1 a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// listenersOf returns the addresses of every TCP socket that process pid
// listens on, from /proc/net/tcp{,6} and the process's descriptors.
func listenersOf(pid int) ([]netip.AddrPort, error) {
	byInode := map[string]netip.AddrPort{}
	for _, file := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		socks, err := procNetListeners(file)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue // no IPv6 on this machine
			}
			return nil, err
		}
		for inode, addr := range socks {
			byInode[inode] = addr
		}
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return nil, nil // the process is gone (or not yet there): no sockets
	}
	var out []netip.AddrPort
	for _, fd := range fds {
		link, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if err != nil || !strings.HasPrefix(link, "socket:[") {
			continue
		}
		if addr, ok := byInode[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")]; ok {
			out = append(out, addr)
		}
	}
	return out, nil
}

// procNetListeners parses a /proc/net/tcp{,6} file into the listening
// sockets' local addresses, keyed by inode.
func procNetListeners(file string) (map[string]netip.AddrPort, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	out := map[string]netip.AddrPort{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Scan() // the header
	for sc.Scan() {
		// sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode ...
		f := strings.Fields(sc.Text())
		if len(f) < 10 || f[3] != "0A" { // 0A is TCP_LISTEN
			continue
		}
		addr, err := parseProcNetAddr(f[1])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		out[f[9]] = addr
	}
	return out, sc.Err()
}

// parseProcNetAddr decodes a /proc/net/tcp{,6} address such as
// "0100007F:1F90" (127.0.0.1:8080): the address is hex in 32-bit words of
// host (little-endian) byte order, the port hex in network order.
func parseProcNetAddr(s string) (netip.AddrPort, error) {
	host, port, ok := strings.Cut(s, ":")
	if !ok {
		return netip.AddrPort{}, fmt.Errorf("bad address %q", s)
	}
	raw, err := hex.DecodeString(host)
	if err != nil || (len(raw) != 4 && len(raw) != 16) {
		return netip.AddrPort{}, fmt.Errorf("bad address %q", s)
	}
	for i := 0; i < len(raw); i += 4 {
		slices.Reverse(raw[i : i+4])
	}
	p, err := strconv.ParseUint(port, 16, 16)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("bad port in %q", s)
	}
	addr, _ := netip.AddrFromSlice(raw)
	return netip.AddrPortFrom(addr, uint16(p)), nil
}

// testRuntime is a runtime with its logs kept for failure messages, and
// recorded for assertions.
type testRuntime struct {
	*runtime.Runtime
	logs    *syncBuffer
	records *logRecorder
}

// startRuntime starts a runtime with servers in a fresh state dir. It is
// shut down when the test ends, after which no process of this test may be
// left but those in keep (servers the test itself started and stops
// later).
func startRuntime(t *testing.T, keep []int, servers ...config.Server) *testRuntime {
	t.Helper()
	return startRuntimeWith(t, keep, runtime.Options{}, servers...)
}

// startRuntimeWith is startRuntime with the host's options (sampling,
// elicitation, roots, ...). StateDir, Logger and StopGrace are set here:
// the logger records every record, Debug included.
func startRuntimeWith(t testing.TB, keep []int, opts runtime.Options, servers ...config.Server) *testRuntime {
	t.Helper()
	dir := t.TempDir()
	testutil.WriteConfig(t, dir, servers...)
	logs := &syncBuffer{}
	records := &logRecorder{}
	opts.StateDir = dir
	opts.Logger = slog.New(&recordingHandler{
		rec:   records,
		inner: slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}),
	})
	opts.StopGrace = 500 * time.Millisecond
	rt, err := runtime.Start(context.Background(), opts)
	if err != nil {
		t.Fatalf("runtime.Start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := rt.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		var left []int
		for _, pid := range testutil.ProcessesWithMarker(marker) {
			if !slices.Contains(keep, pid) {
				left = append(left, pid)
			}
		}
		if len(left) > 0 {
			t.Errorf("processes left after the runtime's Shutdown: %v", left)
		}
		if t.Failed() {
			t.Logf("runtime logs:\n%s", logs.String())
		}
	})
	return &testRuntime{Runtime: rt, logs: logs, records: records}
}

// waitReady waits until server leaves "starting" and fails the test unless
// it is then ready.
func (rt *testRuntime) waitReady(t testing.TB, name string) status.Server {
	t.Helper()
	sub := rt.Subscribe(events.SubscribeOptions{Server: name, Buffer: 1 << 14})
	defer sub.Close()
	testutil.AwaitState(t, sub, readyTimeout, fmt.Sprintf("server %q out of starting", name), serverStatus(t, rt, name),
		func(s status.State, _ int) bool { return s != status.Starting })
	st := serverStatus(t, rt, name)
	if st.State != status.Ready {
		t.Fatalf("server %q is %s, not ready: %+v", name, st.State, st)
	}
	return st
}

// waitTools waits until every name in want is registered and returns the
// registry then. server-everything announces tools/list_changed several
// times right after initialize, so the list may still change after ready.
func (rt *testRuntime) waitTools(t *testing.T, want []string) []tools.Tool {
	t.Helper()
	sub := rt.Registry().Subscribe()
	defer sub.Close()
	timeout := time.After(toolsTimeout)
	for {
		list := rt.Tools()
		if missing := missingTools(list, want); len(missing) == 0 {
			return list
		} else {
			select {
			case <-sub.C: // subscribed before the first List: no change is missed
			case <-timeout:
				t.Fatalf("tools %v still missing after %v; registered: %v; status: %+v",
					missing, toolsTimeout, toolNames(list), rt.Status())
			}
		}
	}
}

func missingTools(list []tools.Tool, want []string) []string {
	var missing []string
	for _, name := range want {
		if !slices.ContainsFunc(list, func(tl tools.Tool) bool { return tl.Name == name }) {
			missing = append(missing, name)
		}
	}
	return missing
}

func toolNames(list []tools.Tool) []string {
	names := make([]string, len(list))
	for i, tl := range list {
		names[i] = tl.Name
	}
	return names
}

// call calls a tool through the runtime and fails the test on an error or
// an isError result.
func (rt *testRuntime) call(t *testing.T, name string, args map[string]any) tools.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	res, err := rt.CallTool(ctx, name, args)
	if err != nil {
		t.Fatalf("CallTool(%s, %v): %v", name, args, err)
	}
	if res.IsError {
		t.Fatalf("CallTool(%s, %v) reported an error: %+v", name, args, res)
	}
	return res
}

// syncBuffer collects a process's output and logs.
type syncBuffer = testutil.Buffer
