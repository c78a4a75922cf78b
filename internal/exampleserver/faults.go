package exampleserver

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// garbage is what GarbageStdout mode writes: lines none of which is JSON,
// the second starting like a JSON-RPC message to catch lenient parsers.
const garbage = "this is not JSON-RPC\n" +
	`{"jsonrpc": "2.0", "id": 1, "result": garbage` + "\n" +
	"<html><body>garbage</body></html>\n"

// writeGarbage implements Options.GarbageStdout.
func writeGarbage(stderr *lockedWriter, in io.ReadCloser, out io.WriteCloser) error {
	announceReady(stderr)
	_, err := io.WriteString(out, garbage)
	// Closing out tells the client at once that no answer is coming.
	closeErr := errors.Join(out.Close(), in.Close())
	if err != nil {
		return errors.Join(fmt.Errorf("writing garbage: %w", err), closeErr)
	}
	return ErrGarbageStdout
}

// hang implements Options.HangInitialize: it keeps reading so the client's
// writes never block, and never writes anything back.
func hang(ctx context.Context, stderr *lockedWriter, in io.ReadCloser, out io.WriteCloser) error {
	defer out.Close()
	announceReady(stderr)
	drained := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, in)
		drained <- err
	}()
	select {
	case err := <-drained:
		in.Close()
		if err != nil {
			return fmt.Errorf("reading input: %w", err)
		}
		return nil
	case <-ctx.Done():
		// Closing in ends the reader goroutine for pipes; a read that Close
		// cannot interrupt ends with the process, so it is not waited for.
		in.Close()
		return ctx.Err()
	}
}
