package runtime

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/openprogram/mcpvisor/events"
)

// A host follows one server's events as they happen, and re-reads Status
// when it learns that it missed some.
func ExampleRuntime_Subscribe() {
	rt, err := Start(context.Background(), Options{StateDir: "/path/to/state"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rt.Shutdown(context.Background())

	sub := rt.Subscribe(events.SubscribeOptions{Server: "github"})
	defer sub.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		e, err := sub.Next(ctx)
		if errors.Is(err, events.ErrClosed) || errors.Is(err, context.DeadlineExceeded) {
			return // the runtime shut down, or the host stopped waiting
		}
		switch e := e.(type) {
		case events.Dropped:
			fmt.Println("missed", e.N, "events:", rt.Status())
		case events.StateChanged:
			if e.To == "backoff" {
				fmt.Println("github restarting at", e.NextRetryAt.Format(time.TimeOnly), "after:", e.Error)
			}
		case events.LoginRequired:
			fmt.Println("github needs a login")
		case events.SessionStarted:
			fmt.Println("github started, pid", e.PID)
		}
	}
}
