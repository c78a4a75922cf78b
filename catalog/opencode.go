package catalog

import (
	"path/filepath"
	"strings"

	"github.com/openprogram/mcpvisor/config"
)

// opencode: opencode.json or opencode.jsonc in ~/.config/opencode and in
// a project's root, {"mcp": {NAME: ...}}: "type" "local" ("command" as an
// argv array, "environment") or "remote" ("url", "headers", "oauth"),
// "enabled", "timeout" in milliseconds for the tool listing. `{env:VAR}`
// is expanded anywhere in the file; `{file:PATH}` reads a file.
func readOpencode(c *collector) {
	dirs := []hostFile{{path: join(c.opts.xdgConfigDir(), "opencode")}}
	for _, dir := range c.opts.Projects {
		dirs = append(dirs, hostFile{dir, dir})
	}
	for _, dir := range dirs {
		if dir.path == "" {
			continue
		}
		for _, name := range []string{"opencode.json", "opencode.jsonc"} {
			c.jsonServers(SourceOpencode, filepath.Join(dir.path, name), true, inProject(dir.project, mapOpencode), keyPath{"mcp"})
		}
	}
}

func mapOpencode(_ string, f *fields) *mapping {
	m := newMapping(opencodeDialect)
	typ, _ := f.str(m, "type")
	argv, hasArgv := f.strs(m, "command")
	url, hasURL := f.str(m, "url")
	switch {
	case typ == "local" && hasArgv && len(argv) > 0:
		m.local(argv[0], argv[1:])
	case typ == "local":
		m.cfg.Type = config.TypeLocal
		m.warn("a local server with no command: nothing to start")
	case typ == "remote" && hasURL:
		// opencode tries Streamable HTTP and falls back to SSE.
		m.remote(config.TypeHTTP, url)
	case typ == "remote":
		m.cfg.Type = config.TypeHTTP
		m.warn("a remote server with no url")
	default:
		m.warn("type %q is neither \"local\" nor \"remote\": not mapped", typ)
	}
	if hasArgv && typ == "remote" {
		m.warn("command: a remote server runs no command: not mapped")
	}
	if hasURL && typ == "local" {
		m.warn("url: a local server has no url: not mapped")
	}
	if env, ok := f.strMap(m, "environment"); ok {
		m.env(env)
	}
	if h, ok := f.strMap(m, "headers"); ok {
		m.headers(h)
	}
	if on, ok := f.boolean(m, "enabled"); ok && !on {
		m.disabled("opencode")
	}
	if ms, ok := f.number(m, "timeout"); ok {
		m.cfg.ConnectTimeoutSeconds = m.seconds("timeout", ms/1000)
	}
	mapOpencodeOAuth(m, f)
	return m
}

// mapOpencodeOAuth maps "oauth": {"clientId", "clientSecret", "scope"} to
// a pre-registered OAuth client; "oauth": false (no automatic sign-in) is
// what mcpvisor does anyway.
func mapOpencodeOAuth(m *mapping, f *fields) {
	raw := f.take("oauth")
	if raw == nil || string(raw) == "false" {
		return
	}
	if o := m.oauthClient("oauth", raw, "clientId", "clientSecret"); o != nil {
		if scope, ok := o.str(m, "scope"); ok {
			if scope, ok = m.literal("oauth.scope", "auth.scopes", scope); ok {
				m.cfg.Auth.Scopes = strings.Fields(scope)
			}
		}
		m.unmappedIn("oauth", o)
	}
}
