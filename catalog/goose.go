package catalog

import (
	"fmt"

	"github.com/openprogram/mcpvisor/config"
	"go.yaml.in/yaml/v3"
)

// goose: config.yaml in ~/.config/goose (%APPDATA%\Block\goose\config on
// windows), "extensions": {KEY: ...}: "type" "stdio" ("cmd", "args",
// "envs", "env_keys"), "sse" or "streamable_http" ("uri", "headers"), or
// goose's own kinds (builtin, platform, frontend, inline_python) that no
// other host can run; "enabled"; "timeout" in seconds per call. goose
// expands no variables; "env_keys" name secrets kept in its keyring.
func readGoose(c *collector) {
	dir := join(c.opts.xdgConfigDir(), "goose")
	if c.opts.goos() == "windows" {
		dir = join(c.opts.xdgConfigDir(), "Block", "goose", "config")
	}
	path := join(dir, "config.yaml")
	var doc struct {
		Extensions any `yaml:"extensions"`
	}
	ok := c.settingsFile(SourceGoose, path, func(data []byte) error {
		return decodeYAML(data, &doc)
	})
	if ok {
		c.serverValues(SourceGoose, path, "extensions", doc.Extensions, mapGoose)
	}
}

// decodeYAML decodes data into v, refusing any alias. yaml.v3 expands an
// alias as a copy of its anchor's value, so a 200 KiB file of one
// anchored 200 KiB string and a thousand aliases decodes to 200 MiB, and
// its excessive-aliasing check lets such a file through when enough other
// nodes surround the aliases: the file's size would bound nothing. goose
// writes no anchors or aliases, so a file with one was not written by
// goose; decoding into a Node first builds each node once, unexpanded.
func decodeYAML(data []byte, v any) error {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return fmt.Errorf("it is not valid YAML%s", lineOf(err))
	}
	if line := aliasLine(&root); line > 0 {
		return fmt.Errorf("it holds a YAML alias (line %d), which goose never writes and which would copy its anchor's value: not read", line)
	}
	if err := root.Decode(v); err != nil {
		return fmt.Errorf("it is not valid YAML%s", lineOf(err))
	}
	return nil
}

// aliasLine is the line of the first alias under n, 0 for none. It walks
// by an explicit stack: the parser bounds the depth, but not by much.
func aliasLine(n *yaml.Node) int {
	stack := []*yaml.Node{n}
	for len(stack) > 0 {
		n, stack = stack[len(stack)-1], stack[:len(stack)-1]
		if n.Kind == yaml.AliasNode {
			return max(n.Line, 1)
		}
		stack = append(stack, n.Content...)
	}
	return 0
}

func mapGoose(_ string, f *fields) *mapping {
	m := newMapping(literalDialect)
	typ, _ := f.str(m, "type")
	switch typ {
	case "stdio":
		cmd, ok := f.str(m, "cmd")
		args, _ := f.strs(m, "args")
		if ok {
			m.local(cmd, args)
		} else {
			m.cfg.Type = config.TypeLocal
			m.warn("a stdio extension with no cmd: nothing to start")
		}
	case "sse", "streamable_http":
		mt := config.TypeSSE
		if typ == "streamable_http" {
			mt = config.TypeHTTP
		}
		if uri, ok := f.str(m, "uri"); ok {
			m.remote(mt, uri)
		} else {
			m.cfg.Type = mt
			m.warn("a remote extension with no uri")
		}
	default:
		m.warn("type %q is a goose extension kind that runs inside goose: not mapped", typ)
		f.ignore("bundled", "display_name", "code", "dependencies", "tools", "instructions")
	}
	if env, ok := f.strMap(m, "envs"); ok {
		m.env(env)
	}
	if keys, ok := f.strs(m, "env_keys"); ok && len(keys) > 0 {
		vars := map[string]string{}
		for _, k := range keys {
			vars[k] = envReference(m, "env_keys", k)
		}
		m.setEnv(vars)
		m.warn("env_keys: goose keeps these in its keyring; mcpvisor reads each from the environment variable of the same name")
	}
	if h, ok := f.strMap(m, "headers"); ok {
		m.headers(h)
	}
	if on, ok := f.boolean(m, "enabled"); ok && !on {
		m.disabled("goose")
	}
	if s, ok := f.number(m, "timeout"); ok {
		m.cfg.TimeoutSeconds = m.seconds("timeout", s)
	}
	// goose offers every tool when available_tools is empty.
	tools, _ := f.strs(m, "available_tools")
	m.tools("available_tools", tools, false, nil)
	f.ignore("name", "description", "bundled", "display_name")
	return m
}
