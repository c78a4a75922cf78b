package catalog

import "github.com/openprogram/mcpvisor/config"

// Gemini CLI: ~/.gemini/settings.json and a project's
// .gemini/settings.json, {"mcpServers": {NAME: ...}}: "command", "args",
// "env", "cwd" for a local server; "url" with "headers" for a remote one,
// "type" "sse" for SSE, "http" or "streamable-http" (or no type, when
// Gemini CLI tries Streamable HTTP and falls back to SSE) for Streamable
// HTTP; "httpUrl" is the older spelling of a Streamable HTTP url;
// "timeout" in milliseconds;
// "includeTools" and "excludeTools"; "trust". `$VAR` and `${VAR}` are
// expanded in every string of the file.
func readGemini(c *collector) {
	// Gemini CLI strips comments from settings.json: JSON with comments.
	for _, hf := range c.userAndProjectFiles(join(c.opts.Home, ".gemini", "settings.json"), ".gemini", "settings.json") {
		c.jsonServers(SourceGemini, hf.path, true, inProject(hf.project, mapGemini), keyPath{"mcpServers"})
	}
}

func mapGemini(_ string, f *fields) *mapping {
	m := newMapping(geminiDialect)
	// httpUrl first: with both, Gemini CLI takes it.
	types := stdioHTTPSSE()
	types["streamable-http"] = config.TypeHTTP
	mapStd(f, m, stdShape{host: "Gemini CLI", types: types, urlType: config.TypeHTTP, urlKeys: []string{"httpUrl", "url"}})
	if m.cfg.Type == config.TypeHTTP && !f.has("type") && !f.has("httpUrl") && f.has("url") {
		m.warn("url with no type: mapped as Streamable HTTP, which Gemini CLI tries first; Gemini CLI falls back to SSE when the server has no Streamable HTTP endpoint, mcpvisor does not: for such a server set type \"sse\"")
	}
	if ms, ok := f.number(m, "timeout"); ok {
		m.cfg.TimeoutSeconds = m.seconds("timeout", ms/1000)
	}
	// Gemini CLI expands every string, tool names too; mcpvisor's tool
	// lists take none.
	allow, given := f.strs(m, "includeTools")
	deny, _ := f.strs(m, "excludeTools")
	m.tools("includeTools", m.literals("includeTools", "tools.allow", allow), given,
		m.literals("excludeTools", "tools.deny", deny))
	if f.take("trust") != nil {
		m.warn("trust: Gemini CLI's confirmation bypass has no mcpvisor counterpart")
	}
	for _, k := range []string{"oauth", "authProviderType"} {
		if f.take(k) != nil {
			m.warn("%s: Gemini CLI's OAuth settings are not carried; set auth.kind \"oauth\" to sign in", k)
		}
	}
	f.ignore("description")
	return m
}
