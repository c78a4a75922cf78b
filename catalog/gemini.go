package catalog

import "github.com/openprogram/mcpvisor/config"

// Gemini CLI: ~/.gemini/settings.json and a project's
// .gemini/settings.json, {"mcpServers": {NAME: ...}}: "command", "args",
// "env", "cwd" for a local server; "httpUrl" (Streamable HTTP) or "url"
// (SSE) with "headers" for a remote one; "timeout" in milliseconds;
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
	// httpUrl first: with both, Gemini CLI takes Streamable HTTP.
	urlType := config.TypeSSE
	if f.has("httpUrl") {
		urlType = config.TypeHTTP
	}
	mapStd(f, m, stdShape{host: "Gemini CLI", types: stdioHTTPSSE(), urlType: urlType, urlKeys: []string{"httpUrl", "url"}})
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
