package exampleserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/signal"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Run serves the example server over newline-delimited JSON on in and out
// (typically stdin and stdout). It first writes [ReadyLine] to
// [Options.Stderr].
//
// Run returns nil when the client closes in, ctx.Err() when ctx ends, and
// [ErrExitRequested] once [Options.ExitAfterCalls] calls have been answered.
// In the last two cases tool calls still running are cancelled first, and
// Run waits for their handlers to return. Run closes in and out before it
// returns.
//
// In [Options.GarbageStdout] mode Run writes non-JSON lines to out and
// returns [ErrGarbageStdout]. In [Options.HangInitialize] mode it discards
// its input and never answers; when ctx ends it closes in but does not wait
// for a read that closing cannot interrupt (such as one on a terminal).
func Run(ctx context.Context, opts Options, in io.ReadCloser, out io.WriteCloser) error {
	opts = opts.withDefaults()
	if opts.IgnoreSIGTERM {
		signal.Ignore(syscall.SIGTERM)
	}
	stderr := &lockedWriter{w: opts.Stderr}
	switch {
	case opts.GarbageStdout:
		return writeGarbage(stderr, in, out)
	case opts.HangInitialize:
		return hang(ctx, stderr, in, out)
	default:
		return serve(ctx, opts, stderr, in, out)
	}
}

// announceReady writes ReadyLine. A broken stderr is ignored on purpose: the
// line is a diagnostic, and the server can still serve without it.
func announceReady(stderr *lockedWriter) {
	_ = stderr.writeLine(ReadyLine)
}

// serve runs the MCP session until the client leaves, ctx ends or the
// configured number of calls has been answered.
func serve(ctx context.Context, opts Options, stderr *lockedWriter, in io.ReadCloser, out io.WriteCloser) error {
	srv := newServer(opts, stderr)

	// stopCtx cancels running tool calls when serve stops for any reason but
	// the client leaving; ServerSession.Close would otherwise wait for a long
	// sleep to finish.
	stopCtx, stop := context.WithCancel(ctx)
	defer stop()

	var (
		counter *callCounter
		exit    <-chan struct{} // nil, so never ready, without a limit
	)
	middleware := []mcp.Middleware{cancelOn(stopCtx)}
	if opts.ExitAfterCalls > 0 {
		counter = newCallCounter(opts.ExitAfterCalls)
		exit = counter.reached
		middleware = append([]mcp.Middleware{counter.middleware}, middleware...)
		out = signalWriter{WriteCloser: out, counter: counter}
	}
	srv.AddReceivingMiddleware(middleware...)

	// Announcing before Connect keeps the ready line first on stderr: input
	// sent after it waits in the stream until the session reads it.
	announceReady(stderr)
	if opts.ColdStart > 0 {
		if err := coldStart(ctx, stderr, opts.Name, opts.ColdStart, opts.ColdStartGate); err != nil {
			return errors.Join(err, in.Close(), out.Close())
		}
	}
	ss, err := srv.Connect(ctx, &mcp.IOTransport{Reader: in, Writer: futureWriter{out}}, nil)
	if err != nil {
		return errors.Join(fmt.Errorf("connecting: %w", err), in.Close(), out.Close())
	}

	ended := make(chan error, 1)
	go func() { ended <- ss.Wait() }()
	shutdown := func() {
		stop()
		_ = ss.Close() // the session's end is reported by Wait
		<-ended
	}
	select {
	case err := <-ended:
		// The client may leave as soon as it has the last answer, before
		// exit is ready; the process must still report the requested exit.
		if counter != nil && counter.limitReached() {
			return ErrExitRequested
		}
		return err
	case <-ctx.Done():
		shutdown()
		return ctx.Err()
	case <-exit:
		shutdown()
		return ErrExitRequested
	}
}

// cancelOn returns middleware that cancels a request's context when stopCtx
// ends, as the SDK does not propagate the server's context to handlers.
func cancelOn(stopCtx context.Context) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			defer context.AfterFunc(stopCtx, cancel)()
			return next(ctx, method, req)
		}
	}
}

// futureWriter turns the future tool's marker block into a block of an
// unknown content type as it is written (each message is one Write).
type futureWriter struct{ io.WriteCloser }

var (
	futureMarker = []byte(`{"type":"text","text":"` + FutureBlock + `"}`)
	futureBlock  = []byte(`{"type":"hologram","data":"aGVsbG8="}`)
)

func (w futureWriter) Write(p []byte) (int, error) {
	if !bytes.Contains(p, futureMarker) {
		return w.WriteCloser.Write(p)
	}
	if _, err := w.WriteCloser.Write(bytes.ReplaceAll(p, futureMarker, futureBlock)); err != nil {
		return 0, err
	}
	return len(p), nil
}
