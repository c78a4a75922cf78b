package mcpconn

import (
	"context"
	"strings"
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
