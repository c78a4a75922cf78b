package runtime

import (
	"context"
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/events"
)

// TestCallsEmitNothing: a tool call emits no event (the call path must
// not pay for the bus, and a subscriber must not hear of every call), so
// a subscriber's stream is about the servers alone. The example server's
// echo logs nothing, so any event here would come from the runtime.
func TestCallsEmitNothing(t *testing.T) {
	rt := start(t, Options{}, exampleServer("ex"))
	rt.waitSettled(t, "ex")
	// The start's last events are its tool and prompt listings.
	startup := rt.Subscribe(events.SubscribeOptions{Server: "ex", From: 1})
	defer startup.Close()
	deadline := time.Now().Add(eventsWait)
	for tools, prompts := false, false; !tools || !prompts; {
		switch nextEvent(t, startup, deadline).(type) {
		case events.ToolsChanged:
			tools = true
		case events.PromptsChanged:
			prompts = true
		}
	}
	before := rt.bus.LastSeq()
	sub := rt.Subscribe(events.SubscribeOptions{}) // server logs too
	defer sub.Close()
	for range 20 {
		if _, err := rt.CallTool(t.Context(), "ex__echo", map[string]any{"text": "x"}); err != nil {
			t.Fatal(err)
		}
	}
	drained, cancel := context.WithCancel(t.Context())
	cancel() // Next hands over what is buffered, then says ctx is done
	for {
		e, err := sub.Next(drained)
		if err != nil {
			break
		}
		t.Errorf("a call emitted %s", e)
	}
	if after := rt.bus.LastSeq(); after != before {
		t.Errorf("20 calls moved the sequence from %d to %d", before, after)
	}
}
