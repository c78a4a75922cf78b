package mcpconn

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/internal/redact"
	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/tools"
)

func server(command ...string) config.Server {
	return config.Server{
		Name: "t", Type: config.TypeLocal, Command: command, Enabled: true,
		Env: map[string]string{testutil.MarkerEnv: marker},
	}
}

func assertNoProcesses(t *testing.T) {
	t.Helper()
	if left := testutil.ProcessesWithMarker(marker); len(left) > 0 {
		t.Fatalf("processes left: %v", left)
	}
}

func TestMergeEnv(t *testing.T) {
	got := mergeEnv([]string{"A=1", "B=2", "PATH=/bin"}, map[string]string{"B": "over", "C": "new"})
	slices.Sort(got)
	want := []string{"A=1", "B=over", "C=new", "PATH=/bin"}
	if !slices.Equal(got, want) {
		t.Fatalf("mergeEnv = %v, want %v", got, want)
	}
}

// A key the parent holds twice is kept once, the last: the PWD a cwd
// appends wins over the inherited one, and a configured PWD over both.
func TestMergeEnvDuplicates(t *testing.T) {
	got := mergeEnv([]string{"PWD=/old", "A=1", "PWD=/new"}, nil)
	if want := []string{"A=1", "PWD=/new"}; !slices.Equal(got, want) {
		t.Fatalf("mergeEnv = %v, want %v", got, want)
	}
	tr := newStdioTransport([]string{"/bin/true"}, "/srv/x", map[string]string{"K": "v"}, nil, time.Second, func(f func()) { go f() }, nil)
	cmd := tr.inner.Command
	if cmd.Dir != "/srv/x" || !slices.Contains(cmd.Env, "PWD=/srv/x") || slices.ContainsFunc(cmd.Env, func(kv string) bool {
		return strings.HasPrefix(kv, "PWD=") && kv != "PWD=/srv/x"
	}) {
		t.Fatalf("dir %q, env PWD entries wrong", cmd.Dir)
	}
	tr = newStdioTransport([]string{"/bin/true"}, "/srv/x", map[string]string{"PWD": "/configured"}, nil, time.Second, func(f func()) { go f() }, nil)
	if !slices.Contains(tr.inner.Command.Env, "PWD=/configured") || slices.Contains(tr.inner.Command.Env, "PWD=/srv/x") {
		t.Fatal("a configured PWD did not win")
	}
}

func TestStderrWriterLinesAndTail(t *testing.T) {
	var logs strings.Builder
	var emitted stderrEvents
	tail := &Tail{}
	w := newStderrWriter(slog.New(slog.NewTextHandler(&logs, nil)), emitted.emit, "s", tail, redact.New("hunter2-secret"))
	fmt.Fprint(w, "first li")
	fmt.Fprint(w, "ne\r\nsecond hunter2-secret\n")
	fmt.Fprint(w, "no newline")
	w.flush()
	want := []string{"first line", "second [redacted]", "no newline"}
	if got := tail.Lines(); !slices.Equal(got, want) {
		t.Fatalf("tail = %q, want %q", got, want)
	}
	if got := emitted.texts(t, "s"); !slices.Equal(got, want) {
		t.Fatalf("stderr events = %q, want %q", got, want)
	}
	if strings.Contains(logs.String(), "hunter2-secret") {
		t.Fatalf("secret logged: %s", logs.String())
	}
	for i := range TailLines + 7 {
		fmt.Fprintf(w, "line %d\n", i)
	}
	lines := tail.Lines()
	if len(lines) != TailLines || lines[0] != "line 7" || lines[TailLines-1] != fmt.Sprintf("line %d", TailLines+6) {
		t.Fatalf("tail after overflow: len %d, first %q, last %q", len(lines), lines[0], lines[len(lines)-1])
	}
	fmt.Fprint(w, strings.Repeat("x", 3*maxLineBytes))
	fmt.Fprint(w, "\nafter\n")
	lines = tail.Lines()
	if got := lines[len(lines)-2]; !strings.HasSuffix(got, "[line truncated]") || len(got) > maxLineBytes+64 {
		t.Fatalf("too-long line kept as %d bytes ending %q", len(got), got[len(got)-20:])
	}
	if got := lines[len(lines)-1]; got != "after" {
		t.Fatalf("line after a too-long one = %q", got)
	}
}

// A secret that crosses the line cap, in one write or split over writes,
// is never exposed in part.
func TestStderrSecretAtTheCut(t *testing.T) {
	const secret = "s3cret-token-value-0123456789"
	for _, split := range []int{0, 1, len(secret) / 2, len(secret) - 1} {
		for _, offset := range []int{-len(secret) + 1, -5, -1, 0} {
			var logs strings.Builder
			var lines stderrEvents
			tail := &Tail{}
			w := newStderrWriter(slog.New(slog.NewTextHandler(&logs, nil)), lines.emit, "s", tail, redact.New(secret))
			line := strings.Repeat("y", maxLineBytes+offset) + secret + strings.Repeat("z", 100)
			cut := maxLineBytes + offset + split
			fmt.Fprint(w, line[:cut])
			fmt.Fprint(w, line[cut:]+"\n")
			got := strings.TrimSuffix(tail.Lines()[0], " …[line truncated]")
			for k := 3; k <= len(secret); k++ {
				if strings.HasSuffix(got, secret[:k]) || strings.Contains(got, secret) {
					t.Fatalf("offset %d split %d: the line shows %d bytes of the secret: %q", offset, split, k, got[len(got)-40:])
				}
			}
			if strings.Contains(logs.String(), secret[:8]) || strings.Contains(strings.Join(lines.texts(t, "s"), "\n"), secret[:8]) {
				t.Fatalf("offset %d split %d: secret prefix logged or emitted", offset, split)
			}
		}
	}
}

// A group whose leader and grandchild both ignore stdin close and SIGTERM
// is gone after stop, grandchild included.
func TestStopKillsStubbornGroup(t *testing.T) {
	tail := &Tail{}
	w := newStderrWriter(slog.New(slog.DiscardHandler), nil, "s", tail, nil)
	script := `trap "" TERM; sleep 300 & echo started >&2; while :; do sleep 1; done`
	tr := newStdioTransport([]string{"/bin/sh", "-c", script}, "", map[string]string{testutil.MarkerEnv: marker}, w, 100*time.Millisecond, func(f func()) { go f() }, nil)
	if _, err := tr.Connect(context.Background()); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, "the script's grandchild", func() bool { return len(testutil.ProcessesWithMarker(marker)) >= 2 })
	if tr.pid() <= 0 {
		t.Fatalf("pid = %d", tr.pid())
	}
	tr.stop()
	tr.stop() // idempotent
	assertNoProcesses(t)
}

func TestDialAndCall(t *testing.T) {
	c, err := testDial(context.Background(), Options{Server: server(demoBin, "serve"), Grace: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Tools()) == 0 || c.PID() <= 0 {
		t.Fatalf("tools %d pid %d", len(c.Tools()), c.PID())
	}
	res, err := c.CallTool(context.Background(), "echo", map[string]any{"text": "x"})
	if err != nil || res.IsError {
		t.Fatalf("echo: %v %+v", err, res)
	}
	c.Close()
	c.Close()
	select {
	case <-c.Done():
	default:
		t.Fatal("Done not closed after Close")
	}
	if _, err := c.CallTool(context.Background(), "echo", map[string]any{"text": "x"}); !errors.Is(err, tools.ErrSessionClosed) {
		t.Fatalf("call after Close: %v, want ErrSessionClosed", err)
	}
	assertNoProcesses(t)
}

// Cancelling a dial that waits on a server that never answers initialize
// returns an error and leaves no process, even when the server ignores
// SIGTERM.
func TestAbandonedDialLeavesNothing(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	var work sync.WaitGroup
	go func() {
		_, err := testDial(ctx, Options{Server: server(demoBin, "serve", "-hang-initialize", "-ignore-sigterm"), Grace: 100 * time.Millisecond, Go: work.Go})
		errc <- err
	}()
	testutil.Eventually(t, 10*time.Second, "the server process", func() bool { return len(testutil.ProcessesWithMarker(marker)) > 0 })
	cancel()
	if err := <-errc; err == nil || !strings.Contains(err.Error(), `connecting "t"`) {
		t.Fatalf("Dial err = %v, want a connecting error", err)
	}
	work.Wait()
	assertNoProcesses(t)
}

func TestDialTimeoutNamesTheLimit(t *testing.T) {
	srv := server(demoBin, "serve", "-hang-initialize")
	srv.TimeoutSeconds = 1
	var work sync.WaitGroup
	_, err := testDial(context.Background(), Options{Server: srv, Grace: 100 * time.Millisecond, Go: work.Go})
	if err == nil || !strings.Contains(err.Error(), "timeout_seconds=1") || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want a timeout naming timeout_seconds=1", err)
	}
	work.Wait()
	assertNoProcesses(t)
}

func TestLostSessionIsReported(t *testing.T) {
	c, err := testDial(context.Background(), Options{Server: server(demoBin, "serve", "-exit-after-calls", "1"), Grace: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.CallTool(context.Background(), "echo", map[string]any{"text": "last"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the exit of the server was not noticed")
	}
	if err := c.Err(); err == nil || !strings.Contains(err.Error(), "lost") {
		t.Fatalf("Err = %v", err)
	}
}

// A dial cancelled at any moment, before or while a wrapper command starts
// its own child, leaves no process once its background work is done.
func TestCancelledDialRacesLeaveNothing(t *testing.T) {
	wrapper := server("/bin/sh", "-c", "sleep 300 & exec "+demoBin+" serve")
	for i := range 12 {
		ctx, cancel := context.WithCancel(context.Background())
		if i%3 == 0 {
			cancel() // before anything started
		} else {
			time.AfterFunc(time.Duration(i%7)*time.Millisecond, cancel)
		}
		var work sync.WaitGroup
		c, err := testDial(ctx, Options{Server: wrapper, Grace: 100 * time.Millisecond, Go: work.Go})
		if err == nil {
			c.Close()
		}
		cancel()
		work.Wait()
		assertNoProcesses(t)
	}
}

// A failed dial quotes only its own stderr, not the last line of an
// earlier session of the same server.
func TestDialErrorQuotesOnlyItsOwnStderr(t *testing.T) {
	tail := &Tail{}
	newStderrWriter(slog.New(slog.DiscardHandler), nil, "s", tail, nil).Write([]byte("from an earlier session\n"))
	_, err := testDial(context.Background(), Options{Server: server("/nonexistent/cmd"), Tail: tail})
	if err == nil || strings.Contains(err.Error(), "earlier session") {
		t.Fatalf("err = %v, want no quote of an earlier session's stderr", err)
	}
	_, err = testDial(context.Background(), Options{Server: server("/bin/sh", "-c", "echo this attempt >&2; exit 1"), Tail: tail})
	if err == nil || !strings.Contains(err.Error(), `last stderr line: "this attempt"`) {
		t.Fatalf("err = %v, want this attempt's last stderr line", err)
	}
}
