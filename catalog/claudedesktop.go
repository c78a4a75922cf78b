package catalog

import "github.com/openprogram/mcpvisor/config"

// Claude Desktop: claude_desktop_config.json in the per-OS application
// folder, {"mcpServers": {NAME: {"command", "args", "env"}}}. It starts
// stdio servers only (remote ones are connectors, set up in the app) and
// expands no variables.
func readClaudeDesktop(c *collector) {
	path := join(c.opts.appConfigDir(), "Claude", "claude_desktop_config.json")
	c.jsonServers(SourceClaudeDesktop, path, false, mapClaudeDesktop, keyPath{"mcpServers"})
}

func mapClaudeDesktop(_ string, f *fields) *mapping {
	m := newMapping(literalDialect)
	mapStd(f, m, stdShape{host: "Claude Desktop", types: stdioHTTPSSE(), urlType: config.TypeHTTP, urlKeys: []string{"url"}})
	if m.cfg.Type == config.TypeHTTP || m.cfg.Type == config.TypeSSE {
		m.warn("Claude Desktop starts only local servers from this file; mapped as %s", m.cfg.Type)
	}
	return m
}
