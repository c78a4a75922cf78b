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
func readEditorFile(c *collector, src Source, host, path, workspace string, mapFields func(*mapping, *fields), want ...keyPath) {
	vars := editorVars{host: host, home: c.opts.Home, workspace: workspace, sep: c.opts.pathSeparator(),
		envOnly: src == SourceWindsurf}
	c.jsonServers(src, path, true, func(_ string, f *fields) *mapping {
		m := newMapping(vars.dialect())
		m.project = workspace
		mapFields(m, f)
		return m
	}, want...)
}

func mapCursor(m *mapping, f *fields) {
	mapStd(f, m, stdShape{host: "Cursor", types: cursorTypes(), urlType: config.TypeHTTP, urlKeys: []string{"url"}})
	auth := f.take("auth")
	if auth == nil {
		return
	}
	if a := m.oauthClient("auth", auth, "CLIENT_ID", "CLIENT_SECRET"); a != nil {
		scopes, _ := a.strs(m, "scopes")
		m.cfg.Auth.Scopes = m.literals("auth.scopes", "auth.scopes", scopes)
		m.unmappedIn("auth", a)
	}
}

// cursorTypes are the "type" values Cursor accepts.
func cursorTypes() map[string]string {
	t := stdioHTTPSSE()
	t["streamableHttp"] = config.TypeHTTP
	return t
}
