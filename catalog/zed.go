package catalog

import "github.com/openprogram/mcpvisor/config"

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
	for _, hf := range c.userAndProjectFiles(join(dir, "settings.json"), ".zed", "settings.json") {
		c.jsonServers(SourceZed, hf.path, true, inProject(hf.project, mapZed), keyPath{"context_servers"})
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
	// The older form nests the command; the newer one is mapStd's.
	if nested, ok := newFields(f.raw["command"]); ok {
		f.take("command")
		mapZedCommand(m, nested)
		if on, ok := f.boolean(m, "enabled"); ok && !on {
			m.disabled("Zed")
		}
		m.unmappedIn("command", nested)
	} else {
		mapStd(f, m, stdShape{host: "Zed", types: stdioHTTPSSE(), urlType: config.TypeHTTP, urlKeys: []string{"url"}})
	}
	// Zed's older form writes "settings": {} on every server; what is in
	// it goes to an extension's server only.
	if raw := f.take("settings"); raw != nil {
		if s, ok := newFields(raw); !ok || len(s.raw) > 0 {
			m.warn("settings: Zed hands them to an extension's server; this one is not an extension's: not mapped")
		}
	}
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
