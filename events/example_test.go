package events_test

import (
	"context"
	"fmt"
	"time"

	"github.com/openprogram/mcpvisor/events"
)

func Example() {
	clock := func() time.Time { return time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC) }
	ready := map[string]bool{} // a stand-in for the status board
	bus := events.NewBus(&events.Options{
		Now: clock,
		Reducer: func(e events.Event) events.Event {
			if sc, ok := e.(events.StateChanged); ok {
				ready[sc.Server] = sc.To == "ready"
			}
			return e
		},
	})
	defer bus.Close()
	sub := bus.Subscribe(events.SubscribeOptions{Server: "fs"})
	defer sub.Close()

	bus.Emit(events.SessionStarted{Header: events.Header{Server: "fs"}, PID: 4242, ProtocolVersion: "2025-06-18"})
	bus.Emit(events.StateChanged{Header: events.Header{Server: "fs"}, From: "starting", To: "ready"})
	fmt.Println("ready:", ready["fs"]) // the reducer ran inside Emit

	for range 2 {
		e, _ := sub.Next(context.Background())
		data, _ := e.MarshalJSON()
		fmt.Println(e)
		fmt.Println(string(data))
	}
	// Output:
	// ready: true
	// #1 fs: session started (pid 4242) protocol 2025-06-18
	// {"seq":1,"type":"session_started","server":"fs","time":"2026-12-01T12:00:00Z","pid":4242,"protocol_version":"2025-06-18"}
	// #2 fs: state starting -> ready
	// {"seq":2,"type":"state_changed","server":"fs","time":"2026-12-01T12:00:00Z","from":"starting","to":"ready","restarts":0}
}
