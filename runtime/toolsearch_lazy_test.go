package runtime

import (
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/tools"
)

// With ToolSearch off no index is built until something searches (P2:
// the index costs tens of KiB per server); the first search waits for
// the build, so it already finds a tool registered before it. With
// ToolSearch on the index is built from Start.
func TestSearchIndexBuiltOnFirstSearch(t *testing.T) {
	rt := start(t, Options{})
	if err := rt.Registry().SetServer("web", []tools.Tool{searchTool("web__take_screenshot", "Take a screenshot of the page.", nil)}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-rt.searchWanted:
		t.Fatal("the index was started with ToolSearch off and no search")
	default:
	}
	if got := matchNames(rt.SearchTools("take a screenshot", 5)); len(got) != 1 || got[0] != "web__take_screenshot" {
		t.Fatalf("the first SearchTools = %v, want [web__take_screenshot]", got)
	}
	select {
	case <-rt.searchBuilt:
	default:
		t.Fatal("a search answered before the index was built")
	}

	on := start(t, Options{ToolSearch: ToolSearch{Enabled: true}})
	select {
	case <-on.searchBuilt:
	case <-time.After(searchWait):
		t.Fatal("with ToolSearch on and no search, the index was not built")
	}
}
