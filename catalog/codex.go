package catalog

import (
	"errors"
	"fmt"

	"github.com/openprogram/mcpvisor/config"
	"github.com/pelletier/go-toml/v2"
)

// Codex: ~/.codex/config.toml and a project's .codex/config.toml,
// [mcp_servers.NAME]: "command", "args", "env", "env_vars" (variables
// passed through), "cwd" for a local server; "url",
// "bearer_token_env_var", "http_headers", "env_http_headers" (header →
// variable) for a Streamable HTTP one; "enabled", "startup_timeout_sec"
// (or "startup_timeout_ms"), "tool_timeout_sec", "enabled_tools",
// "disabled_tools". Codex expands no variables inside values.
func readCodex(c *collector) {
	for _, hf := range c.userAndProjectFiles(join(c.opts.Home, ".codex", "config.toml"), ".codex", "config.toml") {
		readCodexFile(c, hf)
	}
}

func readCodexFile(c *collector, hf hostFile) {
	path := hf.path
	var doc struct {
		Servers any `toml:"mcp_servers"`
	}
	ok := c.settingsFile(SourceCodex, path, func(data []byte) error {
		if err := toml.Unmarshal(data, &doc); err != nil {
			var de *toml.DecodeError
			if errors.As(err, &de) {
				row, _ := de.Position()
				return fmt.Errorf("it is not valid TOML (line %d)", row)
			}
			return errors.New("it is not valid TOML")
		}
		return nil
	})
	if ok {
		c.serverValues(SourceCodex, path, "mcp_servers", doc.Servers, inProject(hf.project, mapCodex))
	}
}

func mapCodex(_ string, f *fields) *mapping {
	m := newMapping(literalDialect)
	mapStd(f, m, stdShape{host: "Codex", urlType: config.TypeHTTP, urlKeys: []string{"url"}})
	// Codex passes a few variables to a server; mcpvisor passes its whole
	// environment, so the list needs no mapping.
	f.ignore("env_vars")
	if h, ok := f.strMap(m, "http_headers"); ok {
		m.headers(h)
	}
	if h, ok := f.strMap(m, "env_http_headers"); ok {
		refs := map[string]string{}
		for header, variable := range h {
			refs[header] = envReference(m, "env_http_headers."+header, variable)
		}
		m.setHeaders(refs)
	}
	if v, ok := f.str(m, "bearer_token_env_var"); ok {
		m.cfg.Auth = &authConfig{Kind: config.AuthBearer, Token: envReference(m, "bearer_token_env_var", v)}
	}
	if s, ok := f.number(m, "startup_timeout_sec"); ok {
		m.cfg.ConnectTimeoutSeconds = m.seconds("startup_timeout_sec", s)
	} else if ms, ok := f.number(m, "startup_timeout_ms"); ok {
		m.cfg.ConnectTimeoutSeconds = m.seconds("startup_timeout_ms", ms/1000)
	}
	if s, ok := f.number(m, "tool_timeout_sec"); ok {
		m.cfg.TimeoutSeconds = m.seconds("tool_timeout_sec", s)
	}
	allow, given := f.strs(m, "enabled_tools")
	deny, _ := f.strs(m, "disabled_tools")
	m.tools("enabled_tools", allow, given, deny)
	for _, k := range []string{"oauth", "scopes", "oauth_resource"} {
		if f.take(k) != nil {
			m.warn("%s: Codex's OAuth settings are not carried; set auth.kind \"oauth\" to sign in", k)
		}
	}
	return m
}

// envReference is the reference to the variable a host names; a name
// that is no variable name is a warning and no reference.
func envReference(m *mapping, field, name string) string {
	if !reVarName.MatchString(name) {
		m.warn("%s does not name an environment variable: not mapped", field)
		return ""
	}
	return "${" + name + "}"
}
