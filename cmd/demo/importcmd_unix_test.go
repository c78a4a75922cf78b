//go:build unix

package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A -from that is a FIFO is refused as not a regular file, at once: the
// open does not wait for a writer.
func TestImportFromFIFORefused(t *testing.T) {
	_, stateDir := importHome(t)
	fifo := filepath.Join(t.TempDir(), ".claude.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	type result struct {
		code   int
		errOut string
	}
	done := make(chan result, 1)
	go func() {
		code, _, errOut := runImportT(t, "-from", fifo, "-state-dir", stateDir, "-dry-run")
		done <- result{code, errOut}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	select {
	case r := <-done:
		if r.code != 2 || !strings.Contains(r.errOut, fifo+" is not a regular file") {
			t.Errorf("import -from FIFO: %d %s", r.code, r.errOut)
		}
	case <-ctx.Done():
		// Release the blocked open with a writer, so that nothing outlives the test.
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		<-done
		t.Fatal("import -from FIFO blocked in the open")
	}
}
