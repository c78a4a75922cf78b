package catalog

import (
	"path/filepath"

	"github.com/openprogram/mcpvisor/config"
)

// Cursor: ~/.cursor/mcp.json and a project's .cursor/mcp.json,
// {"mcpServers": {NAME: ...}}: "command", "args", "env", "envFile" for a
// local server, "url" and "headers" for a remote one (Streamable HTTP,
// falling back to SSE), "auth" {"CLIENT_ID", "CLIENT_SECRET", "scopes"}
// for a static OAuth client. `${env:NAME}`, `${userHome}`,
// `${workspaceFolder}`, `${workspaceFolderBasename}`, `${pathSeparator}`
// and `${/}` are expanded in command, args, env, url and headers.
func readCursor(c *collector) {
	readEditorFile(c, SourceCursor, "Cursor", join(c.opts.Home, ".cursor", "mcp.json"), "", mapCursor, keyPath{"mcpServers"})
	for _, dir := range c.opts.Projects {
		readEditorFile(c, SourceCursor, "Cursor", filepath.Join(dir, ".cursor", "mcp.json"), dir, mapCursor, keyPath{"mcpServers"})
	}
}

// readEditorFile reads the servers at want in one file of a VS Code-style
// host; workspace is the project folder of a project file, "" for a
// user file.
func readEditorFile(c *collector, src Source, host, path, workspace string, mapper func(*mapping, *fields), want ...keyPath) {
	found, ok := c.jsoncFile(src, path, want...)
	if !ok {
		return
	}
	vars := editorVars{host: host, home: c.opts.Home, workspace: workspace, sep: c.opts.pathSeparator()}
	for _, v := range found {
		c.servers(src, path, v.value, func(_ string, f *fields) *mapping {
			m := newMapping(vars.dialect())
			mapper(m, f)
			return m
		})
	}
}

func mapCursor(m *mapping, f *fields) {
	mapStd(f, m, stdShape{host: "Cursor", types: cursorTypes(), urlType: config.TypeHTTP, urlKeys: []string{"url"}})
	auth := f.take("auth")
	if auth == nil {
		return
	}
	a, ok := newFields(auth)
	if !ok {
		m.warn("auth is not an object: not mapped")
		return
	}
	m.cfg.Auth = &authConfig{Kind: config.AuthOAuth}
	if id, ok := a.str(m, "CLIENT_ID"); ok {
		m.cfg.Auth.ClientID = m.text("auth.CLIENT_ID", id)
	}
	if secret, ok := a.str(m, "CLIENT_SECRET"); ok {
		m.cfg.Auth.ClientSecret = m.text("auth.CLIENT_SECRET", secret)
	}
	if scopes, ok := a.strs(m, "scopes"); ok {
		m.cfg.Auth.Scopes = scopes
	}
	if rest := a.rest(); len(rest) > 0 {
		m.warn("auth: not mapped: %s", quoteKeys(rest))
	}
}

// cursorTypes are the "type" values Cursor accepts.
func cursorTypes() map[string]string {
	t := stdioHTTPSSE()
	t["streamableHttp"] = config.TypeHTTP
	return t
}
