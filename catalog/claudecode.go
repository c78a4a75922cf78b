package catalog

import (
	"path/filepath"

	"github.com/openprogram/mcpvisor/config"
)

// Claude Code: ~/.claude.json holds the user's servers under "mcpServers"
// and each project's local servers under "projects"[PATH]."mcpServers"
// (the rest of that file is history, often tens of megabytes, and is
// skipped unread); a project's .mcp.json holds its shared servers. Types
// "stdio" (the default), "http" and "sse"; `${VAR}` and `${VAR:-default}`
// are expanded in command, args, env, url and headers, as mcpvisor does.
func readClaudeCode(c *collector) {
	user := join(c.opts.Home, ".claude.json")
	if found, ok := c.jsonFile(SourceClaudeCode, user, keyPath{"mcpServers"}, keyPath{"projects", "*", "mcpServers"}); ok {
		for _, v := range found {
			file, mapOne := user, mapClaudeCode
			if len(v.path) == 3 {
				file, mapOne = user+"#projects/"+v.path[1], inProject(v.path[1], mapClaudeCode)
			}
			c.servers(SourceClaudeCode, user, file, v.value, mapOne)
		}
	}
	for _, dir := range c.opts.Projects {
		c.jsonServers(SourceClaudeCode, filepath.Join(dir, ".mcp.json"), false, inProject(dir, mapClaudeCode), keyPath{"mcpServers"})
	}
}

func mapClaudeCode(_ string, f *fields) *mapping {
	m := newMapping(shellDialect)
	mapStd(f, m, stdShape{host: "Claude Code", types: stdioHTTPSSE(), urlType: config.TypeHTTP, urlKeys: []string{"url"}})
	if f.take("oauth") != nil {
		m.warn("oauth: Claude Code's OAuth client settings are not carried; set auth.kind \"oauth\" to sign in")
	}
	if f.take("headersHelper") != nil {
		m.warn("headersHelper: mcpvisor runs no command to make headers; set headers instead")
	}
	return m
}
