package catalog

import "github.com/openprogram/mcpvisor/config"

// Windsurf: ~/.codeium/windsurf/mcp_config.json, {"mcpServers": {NAME:
// ...}}: "command", "args", "env" for a local server, "serverUrl" (or
// "url") and "headers" for a remote one (Streamable HTTP or SSE),
// "disabled", "disabledTools". `${env:VAR}` and `${file:PATH}` are
// expanded in command, args, env, serverUrl, url and headers.
func readWindsurf(c *collector) {
	readEditorFile(c, SourceWindsurf, "Windsurf", join(c.opts.Home, ".codeium", "windsurf", "mcp_config.json"), "", mapWindsurf, keyPath{"mcpServers"})
}

func mapWindsurf(m *mapping, f *fields) {
	mapStd(f, m, stdShape{host: "Windsurf", types: stdioHTTPSSE(), urlType: config.TypeHTTP, urlKeys: []string{"serverUrl", "url"}})
	deny, _ := f.strs(m, "disabledTools")
	m.tools("", nil, false, deny)
}
