package server

import (
	"context"
	"fmt"
	"testing"

	"github.com/openprogram/mcpvisor/actors"
	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/mcpconn"
	"github.com/openprogram/mcpvisor/tools"
)

// A server with a huge tool list changes it: the event names at most
// MaxNames of each side and counts the rest; Count stays exact.
func TestCatalogChangeNamesAreCapped(t *testing.T) {
	bus := events.NewBus(nil)
	defer bus.Close()
	sub := bus.Subscribe(events.SubscribeOptions{})
	defer sub.Close()
	a := &Actor{deps: &actors.Deps{Events: bus}, cfg: config.Server{Name: "big"}}
	list := func(prefix string, n int) []tools.Tool {
		out := make([]tools.Tool, n)
		for i := range out {
			out[i].Name = fmt.Sprintf("big__%s%05d", prefix, i)
		}
		return out
	}
	a.toolsChanged(list("a", 1000), 0)
	a.toolsChanged(list("b", 250), 0)
	for _, want := range []struct{ count, added, addedMore, removed, removedMore int }{
		{1000, events.MaxNames, 1000 - events.MaxNames, 0, 0},
		{250, events.MaxNames, 250 - events.MaxNames, events.MaxNames, 1000 - events.MaxNames},
	} {
		e, err := sub.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		tc := e.(events.ToolsChanged)
		got := struct{ count, added, addedMore, removed, removedMore int }{tc.Count, len(tc.Added), tc.AddedMore, len(tc.Removed), tc.RemovedMore}
		if got != want {
			t.Errorf("tools changed %+v, want %+v", got, want)
		}
	}
}

// SessionStarted handed the host the actor's own server info, the one it
// compared the next session's with: a host that changed its event changed
// the actor's, and every later event of that server. Each event now owns
// its copy.
func TestSessionStartedOwnsItsServerInfo(t *testing.T) {
	bus := events.NewBus(nil)
	defer bus.Close()
	sub := bus.Subscribe(events.SubscribeOptions{})
	defer sub.Close()
	a := &Actor{deps: &actors.Deps{Events: bus}, cfg: config.Server{Name: "fs"}}
	id := mcpconn.Identity{ServerInfo: &events.ServerInfo{Name: "fs-server", Icons: []tools.Icon{{Src: "https://x.example/i.png", Sizes: []string{"16x16"}}}}}
	a.announce(7, id)
	a.announce(8, id) // a reconnect to a server that says the same
	var got []*events.ServerInfo
	for len(got) < 2 {
		e, err := sub.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if s, ok := e.(events.SessionStarted); ok {
			got = append(got, s.ServerInfo)
		}
	}
	got[0].Name = "changed by a host"
	got[0].Icons[0].Sizes[0] = "changed by a host"
	for i, info := range []*events.ServerInfo{got[1], id.ServerInfo} {
		if info.Name != "fs-server" || info.Icons[0].Sizes[0] != "16x16" {
			t.Errorf("copy %d took a host's change to another event: %+v", i, info)
		}
	}
}
