package catalog

import (
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/openprogram/mcpvisor/config"
)

// serverConfig is the mapped entry in mcpvisor's storage form. The field
// names are config's (see config/parse.go); "cwd" is the one the
// references issue adds.
type serverConfig struct {
	Type                  string            `json:"type"`
	Command               []string          `json:"command,omitempty"`
	Cwd                   string            `json:"cwd,omitempty"`
	Env                   map[string]string `json:"env,omitempty"`
	URL                   string            `json:"url,omitempty"`
	Headers               map[string]string `json:"headers,omitempty"`
	Auth                  *authConfig       `json:"auth,omitempty"`
	Enabled               *bool             `json:"enabled,omitempty"`
	TimeoutSeconds        int               `json:"timeout_seconds,omitempty"`
	ConnectTimeoutSeconds int               `json:"connect_timeout_seconds,omitempty"`
	Tools                 *toolsConfig      `json:"tools,omitempty"`
}

type authConfig struct {
	Kind         string `json:"kind"`
	Token        string `json:"token,omitempty"`
	ClientID     string `json:"client_id,omitempty"`
	ClientSecret string `json:"client_secret,omitempty"`
	// PrivateKey is mcpvisor's auth.private_key; no host reader fills it
	// today, but requires covers it as the other auth secrets, so that a
	// mapping that does cannot leave its variable unlisted.
	PrivateKey string   `json:"private_key,omitempty"`
	Scopes     []string `json:"scopes,omitempty"`
}

type toolsConfig struct {
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
}

// mapping is a host entry being mapped: the config so far and what could
// not be carried over.
type mapping struct {
	cfg      serverConfig
	warnings []string
	tr       dialect
	// project is the project folder of the file the entry is in, "" for
	// a user file: the reader says so (inProject), since a project folder
	// may hold the home directory and with it the user's files.
	project string
}

func newMapping(tr dialect) *mapping {
	return &mapping{tr: tr}
}

// warn records what could not be mapped. The text never holds a value.
func (m *mapping) warn(format string, args ...any) {
	m.warnings = append(m.warnings, fmt.Sprintf(format, args...))
}

// unmapped warns about the fields of f no mapper used.
func (m *mapping) unmapped(f *fields) { m.unmappedIn("", f) }

// unmappedIn warns about the fields no mapper used of f, the object at
// field ("" for the entry itself).
func (m *mapping) unmappedIn(field string, f *fields) {
	rest := f.rest()
	switch {
	case len(rest) == 0:
	case field == "":
		m.warn("not mapped: %s", quoteKeys(rest))
	default:
		m.warn("%s: not mapped: %s", field, quoteKeys(rest))
	}
}

// text translates one string of the host into mcpvisor's references.
func (m *mapping) text(field, s string) string { return m.tr(m, field, s) }

// local sets a stdio server from the host's command and args.
func (m *mapping) local(command string, args []string) {
	m.cfg.Type = config.TypeLocal
	argv := append([]string{command}, args...)
	m.cfg.Command = make([]string, len(argv))
	for i, a := range argv {
		m.cfg.Command[i] = m.text(fmt.Sprintf("command[%d]", i), a)
	}
}

// remote sets an http or sse server.
func (m *mapping) remote(typ, url string) {
	m.cfg.Type = typ
	m.cfg.URL = m.text("url", url)
}

// env merges variables, host text, into the env of a local server.
func (m *mapping) env(vars map[string]string) {
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		v := m.text("env."+k, vars[k])
		if m.cfg.Env == nil {
			m.cfg.Env = map[string]string{}
		}
		m.cfg.Env[k] = v
	}
}

// headers merges request headers, host text, into the server's headers.
func (m *mapping) headers(h map[string]string) {
	for _, k := range slices.Sorted(maps.Keys(h)) {
		m.setHeaders(map[string]string{k: m.text("headers."+k, h[k])})
	}
}

// setHeaders merges headers already in mcpvisor's form. Header names are
// compared without case, as HTTP does and config requires: a later
// spelling replaces an earlier one.
func (m *mapping) setHeaders(h map[string]string) {
	for _, k := range slices.Sorted(maps.Keys(h)) {
		if h[k] == "" {
			continue
		}
		if m.cfg.Headers == nil {
			m.cfg.Headers = map[string]string{}
		}
		for old := range m.cfg.Headers {
			if old != k && strings.EqualFold(old, k) {
				delete(m.cfg.Headers, old)
				m.warn("headers: %q and %q are one header; kept %q", old, k, k)
			}
		}
		m.cfg.Headers[k] = h[k]
	}
}

// setEnv merges variables already in mcpvisor's form.
func (m *mapping) setEnv(vars map[string]string) {
	for k, v := range vars {
		if v == "" {
			continue
		}
		if m.cfg.Env == nil {
			m.cfg.Env = map[string]string{}
		}
		m.cfg.Env[k] = v
	}
}

// oauthClient maps a host's pre-registered OAuth client, the object at
// field, whose client id and secret are under idKey and secretKey; it
// returns the object's fields for the host's own keys (scopes).
func (m *mapping) oauthClient(field string, raw []byte, idKey, secretKey string) *fields {
	o, ok := newFields(raw)
	if !ok {
		m.warn("%s is not an object: not mapped", field)
		return nil
	}
	m.cfg.Auth = &authConfig{Kind: config.AuthOAuth}
	if id, ok := o.str(m, idKey); ok {
		m.cfg.Auth.ClientID, _ = m.literal(field+"."+idKey, "auth.client_id", id)
	}
	if secret, ok := o.str(m, secretKey); ok {
		m.cfg.Auth.ClientSecret = m.text(field+"."+secretKey, secret)
	}
	return o
}

// literal maps s, host text for field, into target, an mcpvisor field
// that takes no references (auth.client_id, auth.scopes, tools): the value
// is stored as it is, never expanded. Where the host would expand a
// reference in s, mcpvisor cannot, so s is not mapped (ok false) and a
// warning names the field and the variables (shaped like environment
// variables: any other name may be a pasted secret), to be set by hand
// after import. Otherwise the value is s as the host reads it (a
// ${userHome} of an editor replaced).
func (m *mapping) literal(field, target, s string) (string, bool) {
	probe := newMapping(m.tr)
	t := probe.text(field, s)
	names, err := config.ReferencedNames(t)
	if len(names) > 0 || err != nil {
		shown := slices.DeleteFunc(names, func(n string) bool { return !config.EnvShaped(n) })
		what := "an environment variable"
		switch {
		case len(shown) == 0 || len(shown) < len(names):
		case len(shown) == 1:
			what = "the environment variable " + shown[0]
		default:
			what = "the environment variables " + strings.Join(shown, ", ")
		}
		m.warn("%s refers to %s; mcpvisor's %s takes no references: not mapped; give %s when applying the entry", field, what, target, target)
		return "", false
	}
	m.warnings = append(m.warnings, probe.warnings...)
	v, _ := config.ExpandValue(t, func(string) (string, bool) { return "", false }) // t has no reference
	return v, true
}

// literals maps each of vs as literal does; a value the host would expand
// is left out.
func (m *mapping) literals(field, target string, vs []string) []string {
	var out []string
	for i, v := range vs {
		if l, ok := m.literal(fmt.Sprintf("%s[%d]", field, i), target, v); ok {
			out = append(out, l)
		}
	}
	return out
}

// tools sets the tool filter from a host's lists of tool names, which the
// host matches literally: a glob character of mcpvisor's ("*", "?", "[",
// "\\") is quoted. allowGiven says the host had an allow list (at
// allowField): one that maps to no name (empty, or each name a reference
// mcpvisor's list cannot take) would, as mcpvisor's empty allow list,
// offer every tool, so it is mapped as deny ["*"], no tool, with a
// warning.
func (m *mapping) tools(allowField string, allow []string, allowGiven bool, deny []string) {
	quote := strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`, `[`, `\[`)
	t := &toolsConfig{}
	for _, n := range allow {
		t.Allow = append(t.Allow, quote.Replace(n))
	}
	for _, n := range deny {
		t.Deny = append(t.Deny, quote.Replace(n))
	}
	if allowGiven && len(t.Allow) == 0 {
		t.Deny = []string{"*"}
		m.warn("%s names no tool mcpvisor can list: mapped as tools.deny [\"*\"] (no tool); edit tools.allow to offer some", allowField)
	}
	if len(t.Allow) > 0 || len(t.Deny) > 0 {
		m.cfg.Tools = t
	}
}

// cwd sets the working directory of a local server.
func (m *mapping) cwd(dir string) { m.cfg.Cwd = m.text("cwd", dir) }

// resolveCwd makes a relative cwd (Gemini CLI documents "./mcp_tools")
// absolute against project, the folder the host runs a project's servers
// in; mcpvisor requires an absolute one. Without a project (a user file)
// there is nothing to resolve it against: it is dropped, with a warning.
// A cwd that starts with a reference is left as it is: the reference is
// what makes it absolute.
func (m *mapping) resolveCwd(project string) {
	dir := m.cfg.Cwd
	switch {
	case dir == "" || filepath.IsAbs(dir) || strings.HasPrefix(dir, "${"):
	case project == "":
		m.cfg.Cwd = ""
		m.warn("cwd: a relative path in a user file, with no project folder to resolve it against: not mapped")
	case strings.Contains(dir, "${"):
		// No Clean: ".." next to a reference is the reference's business.
		m.cfg.Cwd = config.EscapeLiteral(project) + string(filepath.Separator) + dir
	default:
		m.cfg.Cwd = config.EscapeLiteral(filepath.Join(project, dir))
	}
}

// dropOffType drops, with a warning, what the entry's type has no use
// for: a local server sends no headers and signs in to nothing, a remote
// one has no process to give env or a cwd. mcpvisor would keep them
// unused, and a user reading the entry would take them for working.
func (m *mapping) dropOffType() {
	c := &m.cfg
	switch c.Type {
	case config.TypeLocal:
		if c.Headers != nil {
			c.Headers = nil
			m.warn("headers: a local server sends no headers: not mapped")
		}
		if c.Auth != nil {
			c.Auth = nil
			m.warn("auth: a local server signs in to nothing: not mapped")
		}
	case config.TypeHTTP, config.TypeSSE:
		if c.Env != nil {
			c.Env = nil
			m.warn("env: a remote server has no process to pass it to: not mapped")
		}
		if c.Cwd != "" {
			c.Cwd = ""
			m.warn("cwd: a remote server has no process to run in it: not mapped")
		}
	}
}

// disabled records a host's off switch: the entry is imported disabled.
func (m *mapping) disabled(host string) {
	off := false
	m.cfg.Enabled = &off
	m.warn("disabled in %s: imported with enabled false", host)
}

// seconds converts a host timeout to whole seconds within mcpvisor's
// bounds (1 to config.MaxTimeoutSeconds), warning when it had to change it.
func (m *mapping) seconds(field string, v float64) int {
	n := int(math.Ceil(v))
	switch {
	case v <= 0 || math.IsNaN(v):
		m.warn("%s is not positive: not mapped", field)
		return 0
	case n > config.MaxTimeoutSeconds:
		m.warn("%s is over mcpvisor's %d seconds: capped", field, config.MaxTimeoutSeconds)
		return config.MaxTimeoutSeconds
	case float64(n) != v:
		m.warn("%s rounded up to %d seconds", field, n)
	}
	return n
}

// requires lists the variables the config refers to with no default. A
// name is listed only where the answer may show it: from command, cwd and
// url when it is shaped like an environment variable (config.EnvShaped),
// and from a secret field (env, headers, auth secrets) only when the whole
// value is references (config.ReferenceOnly), as the masked view shows it;
// otherwise the name may be a pasted token ("${ghp_…}") or part of a
// password (Gemini's "hunter2$PART").
func (c serverConfig) requires() []string {
	var out []string
	for _, v := range append(slices.Clone(c.Command), c.Cwd, c.URL) {
		names, _ := config.RequiredNames(v) // a malformed value is config.Parse's to report
		out = append(out, slices.DeleteFunc(names, func(n string) bool { return !config.EnvShaped(n) })...)
	}
	secrets := slices.Collect(maps.Values(c.Env))
	secrets = append(secrets, slices.Collect(maps.Values(c.Headers))...)
	if c.Auth != nil {
		secrets = append(secrets, c.Auth.Token, c.Auth.ClientSecret, c.Auth.PrivateKey)
	}
	for _, v := range secrets {
		if !config.ReferenceOnly(v) {
			continue
		}
		names, _ := config.RequiredNames(v)
		out = append(out, names...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
