//go:build unix

package peers_test

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/runtime"
	"github.com/openprogram/mcpvisor/tools"
)

// The fleet: popular MCP servers a user attaches beside server-everything,
// run offline over stdio to measure tool search on real tool lists. None
// needs the network to list its tools: Notion's list comes from the
// OpenAPI spec it ships (its token is fake, and no tool is called), and
// Playwright lists without a browser.
func fleetPackages() []npmPackage {
	return []npmPackage{
		{"@modelcontextprotocol/server-memory", "2026.8.31"},
		{"@modelcontextprotocol/server-sequential-thinking", "2026.8.31"},
		{"@modelcontextprotocol/server-filesystem", "2026.8.31"},
		{"@playwright/mcp", "0.0.83"},
		{"@notionhq/notion-mcp-server", "2.5.2"},
	}
}

// fleetDir is where TestMain installed the fleet.
var fleetDir string

// fakeNotionToken is planted as Notion's token: it must never show in
// anything the runtime answers.
const fakeNotionToken = "ntn_fakeFleetToken0000000000000000000000000000"

// fleetServers are the fleet's configs; dir is scratch space (the memory
// server's file, the filesystem server's root, Playwright's browser path).
func fleetServers(dir string) []config.Server {
	js := func(pkg, file string) string { return filepath.Join(fleetDir, "node_modules", pkg, file) }
	env := func(kv ...string) map[string]string {
		m := map[string]string{testutil.MarkerEnv: marker}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	local := func(name string, env map[string]string, command ...string) config.Server {
		return config.Server{Name: name, Type: config.TypeLocal, Enabled: true, Command: command, Env: env}
	}
	return []config.Server{
		local("everything", env(), "node", everythingJS, "stdio"),
		local("memory", env("MEMORY_FILE_PATH", filepath.Join(dir, "memory.jsonl")),
			"node", js("@modelcontextprotocol/server-memory", "dist/index.js")),
		local("thinking", env("DISABLE_THOUGHT_LOGGING", "true"),
			"node", js("@modelcontextprotocol/server-sequential-thinking", "dist/index.js")),
		local("filesystem", env(), "node", js("@modelcontextprotocol/server-filesystem", "dist/index.js"), dir),
		local("playwright", env("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1", "PLAYWRIGHT_BROWSERS_PATH", filepath.Join(dir, "browsers")),
			"node", js("@playwright/mcp", "cli.js"), "--headless", "--isolated"),
		local("notion", env("NOTION_TOKEN", fakeNotionToken),
			"node", js("@notionhq/notion-mcp-server", "bin/cli.mjs")),
	}
}

// startFleet starts a runtime with opts on the whole fleet (startRuntimeWith)
// and returns it once every server is ready, the registry has settled and
// the search index holds every tool.
func startFleet(tb testing.TB, opts runtime.Options) *testRuntime {
	tb.Helper()
	servers := fleetServers(tb.TempDir())
	rt := startRuntimeWith(tb, nil, opts, servers...)
	for _, srv := range servers {
		rt.waitReady(tb, srv.Name)
	}
	// Each server's tools are registered just after it shows ready, and
	// server-everything re-lists after list_changed: wait for every
	// server's tools, then for the registry to stay quiet.
	testutil.Eventually(tb, toolsTimeout, "every fleet server's tools registered", func() bool {
		return !slices.ContainsFunc(servers, func(s config.Server) bool { return len(rt.Registry().ServerTools(s.Name)) == 0 })
	})
	settleRegistry(tb, rt.Runtime)
	// The index follows the registry in the background: wait until a
	// search by each exact name finds that tool first.
	list := rt.Tools()
	testutil.Eventually(tb, toolsTimeout, "the search index holding every tool", func() bool {
		return !slices.ContainsFunc(list, func(t tools.Tool) bool {
			m := rt.SearchTools(t.Name, 1)
			return len(m) == 0 || m[0].Name != t.Name
		})
	})
	return rt
}

// settleRegistry waits until the registry has not changed for settleQuiet,
// bounded by toolsTimeout.
func settleRegistry(tb testing.TB, rt *runtime.Runtime) {
	tb.Helper()
	sub := rt.Registry().Subscribe()
	defer sub.Close()
	deadline := time.After(toolsTimeout)
	for {
		select {
		case <-sub.C:
		case <-time.After(settleQuiet):
			return
		case <-deadline:
			tb.Fatalf("the registry still changes after %v: %v", toolsTimeout, toolNames(rt.Tools()))
		}
	}
}
