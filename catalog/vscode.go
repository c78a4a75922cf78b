package catalog

import (
	"path/filepath"

	"github.com/openprogram/mcpvisor/config"
)

// VS Code: the user's mcp.json in Code/User of the per-OS application
// folder and a workspace's .vscode/mcp.json, {"inputs": [...], "servers":
// {NAME: ...}}, and the "mcp" setting ({"servers": ...}) of the user's and
// the workspace's settings.json. "type" is "stdio" (command, args, env,
// envFile, cwd), "http" or "sse" (url, headers). The files are JSON with
// comments. `${input:ID}` prompts the user, which mcpvisor cannot: it
// becomes the environment variable ID (upper case) with a warning.
func readVSCode(c *collector) {
	user := join(c.opts.appConfigDir(), "Code", "User")
	readVSCodeDir(c, user, "mcp.json", "settings.json", "")
	for _, dir := range c.opts.Projects {
		readVSCodeDir(c, filepath.Join(dir, ".vscode"), "mcp.json", "settings.json", dir)
	}
}

func readVSCodeDir(c *collector, dir, mcpFile, settingsFile, workspace string) {
	if dir == "" {
		return
	}
	readEditorFile(c, SourceVSCode, "VS Code", filepath.Join(dir, mcpFile), workspace, mapVSCode, keyPath{"servers"})
	// "mcp": {"servers"} nested, or the flat "mcp.servers" a settings
	// editor may write.
	readEditorFile(c, SourceVSCode, "VS Code", filepath.Join(dir, settingsFile), workspace, mapVSCode,
		keyPath{"mcp", "servers"}, keyPath{"mcp.servers"})
}

func mapVSCode(m *mapping, f *fields) {
	mapStd(f, m, stdShape{host: "VS Code", types: stdioHTTPSSE(), urlType: config.TypeHTTP, urlKeys: []string{"url"}})
	if f.take("dev") != nil {
		m.warn("dev: VS Code's watch and debug settings have no mcpvisor counterpart")
	}
	f.ignore("gallery", "version", "description")
}
