package catalog

import (
	"path/filepath"

	"github.com/openprogram/mcpvisor/config"
)

// Zed: settings.json in ~/.config/zed (%APPDATA%\Zed on windows) and a
// project's .zed/settings.json, JSON with comments, "context_servers":
// {NAME: ...}: "command" as a string with "args" and "env", or the older
// "command": {"path", "args", "env"}; "url" and "headers" for a remote
// server; "source": "extension" for a server an extension provides. Zed
// expands no variables.
func readZed(c *collector) {
	dir := join(c.opts.xdgConfigDir(), "zed")
	if c.opts.goos() == "windows" {
		dir = join(c.opts.xdgConfigDir(), "Zed")
	}
	readZedFile(c, join(dir, "settings.json"))
	for _, p := range c.opts.Projects {
		readZedFile(c, filepath.Join(p, ".zed", "settings.json"))
	}
}

func readZedFile(c *collector, path string) {
	found, ok := c.jsoncFile(SourceZed, path, keyPath{"context_servers"})
	if !ok {
		return
	}
	for _, v := range found {
		c.servers(SourceZed, path, v.value, mapZed)
	}
}

func mapZed(_ string, f *fields) *mapping {
	m := newMapping(literalDialect)
	source, _ := f.str(m, "source")
	if source == "extension" {
		m.warn("provided by a Zed extension, which mcpvisor cannot run: not mapped")
		f.ignore("settings", "enabled")
		return m
	}
	cmd := f.take("command")
	if nested, ok := newFields(cmd); ok { // the older form
		mapZedCommand(m, nested)
		if on, ok := f.boolean(m, "enabled"); ok && !on {
			m.disabled("Zed")
		}
		if rest := nested.rest(); len(rest) > 0 {
			m.warn("command: not mapped: %s", quoteKeys(rest))
		}
	} else {
		f.used["command"] = false // let mapStd read the string form
	}
	if m.cfg.Type == "" {
		mapStd(f, m, stdShape{host: "Zed", types: stdioHTTPSSE(), urlType: config.TypeHTTP, urlKeys: []string{"url"}})
	}
	f.ignore("settings")
	return m
}

func mapZedCommand(m *mapping, f *fields) {
	path, ok := f.str(m, "path")
	args, _ := f.strs(m, "args")
	if !ok {
		m.cfg.Type = config.TypeLocal
		m.warn("command has no path: nothing to start")
		return
	}
	m.local(path, args)
	if env, ok := f.strMap(m, "env"); ok {
		m.env(env)
	}
}
