package catalog

import "github.com/openprogram/mcpvisor/config"

// stdShape describes a host whose entries follow the common "mcpServers"
// shape (command, args, env, url, headers, type), as Claude Desktop,
// Claude Code, Cursor, VS Code, Windsurf and Gemini CLI write them.
type stdShape struct {
	host    string            // for warnings
	types   map[string]string // the host's "type" values → mcpvisor types; nil: it has no "type"
	urlType string            // the type of a url entry with no "type"
	urlKeys []string          // the keys that may hold the URL
}

// mapStd maps the common fields of f.
func mapStd(f *fields, m *mapping, s stdShape) {
	typ, hasType := "", false
	if s.types != nil {
		typ, hasType = f.str(m, "type")
	}
	command, hasCommand := f.str(m, "command")
	args, hasArgs := f.strs(m, "args")
	url, hasURL := "", false
	urlKey := ""
	for _, k := range s.urlKeys {
		u, ok := f.str(m, k)
		switch {
		case ok && !hasURL:
			url, hasURL, urlKey = u, true, k
		case ok:
			m.warn("%s: %s takes %q first: not mapped", k, s.host, urlKey)
		}
	}
	mt := ""
	switch known, ok := s.types[typ]; {
	case hasType && ok:
		mt = known
	case hasType:
		m.warn("type %q is a transport mcpvisor does not have", typ)
	}
	if mt == "" {
		switch {
		case hasCommand:
			mt = config.TypeLocal
		case hasURL:
			mt = s.urlType
		}
	}
	switch {
	case mt == config.TypeLocal && hasCommand:
		m.local(command, args)
	case mt == config.TypeLocal:
		m.cfg.Type = mt
		m.warn("a local server with no command: nothing to start")
	case mt != "" && hasURL:
		m.remote(mt, url)
	case mt != "":
		m.cfg.Type = mt
		m.warn("a remote server with no url")
	default:
		m.warn("neither a command nor a url: nothing to start")
	}
	switch {
	case hasArgs && !hasCommand:
		m.warn("args without a command: not mapped")
	case hasCommand && m.cfg.Type != config.TypeLocal && m.cfg.Type != "":
		m.warn("command: a %s server runs no command: not mapped", m.cfg.Type)
	}
	if hasURL && m.cfg.Type == config.TypeLocal {
		m.warn("%s: a local server has no url: not mapped", urlKey)
	}
	if env, ok := f.strMap(m, "env"); ok {
		m.env(env)
	}
	if h, ok := f.strMap(m, "headers"); ok {
		m.headers(h)
	}
	if dir, ok := f.str(m, "cwd"); ok {
		m.cwd(dir)
	}
	if f.take("envFile") != nil {
		m.warn("envFile: mcpvisor reads no env file; put the variables in env")
	}
	if off, ok := f.boolean(m, "disabled"); ok && off {
		m.disabled(s.host)
	}
	if on, ok := f.boolean(m, "enabled"); ok && !on {
		m.disabled(s.host)
	}
}

// stdioHTTPSSE is the "type" vocabulary most hosts share.
func stdioHTTPSSE() map[string]string {
	return map[string]string{"stdio": config.TypeLocal, "http": config.TypeHTTP, "sse": config.TypeSSE}
}
