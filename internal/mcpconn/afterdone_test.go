package mcpconn

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// AfterDone runs its func once the transport is gone, after Done is closed
// and with Err set; registered on a transport gone already, it runs too.
func TestAfterDoneRunsOnceTheTransportIsGone(t *testing.T) {
	c, err := testDial(context.Background(), Options{Server: server(demoBin, "serve", "-exit-after-calls", "1"), Grace: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ran := make(chan error, 1)
	c.AfterDone(func() {
		select {
		case <-c.Done():
			ran <- c.Err()
		default:
			ran <- nil
		}
	})
	if _, err := c.CallTool(context.Background(), "echo", map[string]any{"text": "last"}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-ran:
		if err == nil || !strings.Contains(err.Error(), "lost") {
			t.Fatalf("AfterDone ran with Err = %v, want the loss after Done", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("AfterDone did not run after the server exited")
	}
	late := make(chan struct{})
	c.AfterDone(func() { close(late) })
	select {
	case <-late:
	case <-time.After(10 * time.Second):
		t.Fatal("AfterDone on a gone transport did not run")
	}
}

// AfterDone's func runs on a goroutine of Options.Go (the owner's work
// group, which its Shutdown waits for), not on the untracked watcher.
func TestAfterDoneRunsUnderOptionsGo(t *testing.T) {
	var work sync.WaitGroup
	defer work.Wait()
	var tracked sync.Map // ids of the goroutines Options.Go started
	opts := Options{Server: server(demoBin, "serve", "-exit-after-calls", "1"), Grace: 100 * time.Millisecond}
	opts.Go = func(fn func()) {
		work.Go(func() {
			tracked.Store(goroutineID(), true)
			fn()
		})
	}
	c, err := testDial(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ran := make(chan bool, 1)
	c.AfterDone(func() {
		_, ok := tracked.Load(goroutineID())
		ran <- ok
	})
	if _, err := c.CallTool(context.Background(), "echo", map[string]any{"text": "last"}); err != nil {
		t.Fatal(err)
	}
	select {
	case ok := <-ran:
		if !ok {
			t.Fatal("AfterDone's func ran on a goroutine Options.Go did not start")
		}
	case <-time.After(wait):
		t.Fatal("AfterDone did not run after the server exited")
	}
}

// goroutineID is the running goroutine's number, from its stack header
// ("goroutine 42 [running]:").
func goroutineID() string {
	b := make([]byte, 64)
	return strings.Fields(string(b[:runtime.Stack(b, false)]))[1]
}
