package runtime

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/messages"
)

// strayNote and strayRequest are messages the manager has no case for:
// a bug in whoever sends them. The request carries a reply path.
type (
	strayNote    struct{}
	strayRequest struct{ reply chan error }
)

func (m strayRequest) Fail(err error) { m.reply <- err }

// TestManagerUnhandledMessage: a message the manager has no case for is
// logged as a bug naming its type, and one that carries a reply path is
// answered with ErrUnhandled instead of leaving its sender waiting.
func TestManagerUnhandledMessage(t *testing.T) {
	rt := start(t, Options{})
	reply := make(chan error, 1)
	rt.system.Root.Send(rt.manager, strayNote{})
	rt.system.Root.Send(rt.manager, strayRequest{reply: reply})
	select {
	case err := <-reply:
		if !errors.Is(err, messages.ErrUnhandled) {
			t.Fatalf("the stray request was answered with %v, want ErrUnhandled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the stray request was never answered")
	}
	// The mailbox runs in order: both were handled by now.
	logs := rt.logs.String()
	for _, want := range []string{"runtime.strayNote", "runtime.strayRequest"} {
		if !strings.Contains(logs, `msg="manager: unhandled message (a bug)" type=`+want) {
			t.Errorf("the log does not name %s as unhandled:\n%s", want, logs)
		}
	}
	// The manager still serves.
	if _, err := rt.Reload(t.Context()); err != nil {
		t.Fatalf("Reload after the stray messages: %v", err)
	}
}
