package catalog

import (
	"regexp"
	"strings"

	"github.com/openprogram/mcpvisor/config"
)

// A dialect translates one string of a host file into mcpvisor's
// reference syntax (K1): `${VAR}`, `${VAR:-default}`, `${env:VAR}`, with
// `$${` for a literal `${`. field names the value in warnings.
type dialect func(m *mapping, field, s string) string

// Patterns of the hosts' reference syntaxes. Compiled regexps are safe for
// concurrent use and never change.
var (
	reBraces   = regexp.MustCompile(`\$\{([^}]*)\}`)                     // ${...}
	reGemini   = regexp.MustCompile(`\$(?:([A-Za-z0-9_]+)|\{([^}]+)\})`) // $VAR, ${VAR}
	reOpencode = regexp.MustCompile(`\{(env|file):([^}]*)\}`)            // {env:VAR}, {file:path}
	reVarName  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	reShellRef = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(:-.*)?$`)
)

// conv is what a match of a host's reference syntax becomes.
type conv int

const (
	keepText conv = iota // the match itself, as literal text
	litText              // the fragment, as literal text (a known editor variable's value)
	refText              // the fragment, an mcpvisor reference
)

// rewrite translates s: the text between matches of re is literal, and each
// match becomes what ref returns. Literal text is escaped a whole run at a
// time, so that pieces that are literal apart never join into a reference
// ("…$" then "{x}" is not "${x}"), and a reference is kept only when it
// reads back as one; a match nested in another ("${input:${x}}") is kept
// literal, whole, with a warning.
func rewrite(m *mapping, field, s string, re *regexp.Regexp, ref func(sub []string) (string, conv)) string {
	var b, run strings.Builder // run: literal text not yet escaped
	last := 0
	for _, loc := range re.FindAllStringSubmatchIndex(s, -1) {
		run.WriteString(s[last:loc[0]])
		last = loc[1]
		sub := make([]string, len(loc)/2)
		for i := range sub {
			if loc[2*i] >= 0 {
				sub[i] = s[loc[2*i]:loc[2*i+1]]
			}
		}
		if inner := sub[0][min(2, len(sub[0])):]; strings.Contains(inner, "${") || strings.Contains(inner, "{env:") || strings.Contains(inner, "{file:") {
			// The syntax has no nesting: converting the inner one
			// alone would leave half a reference.
			m.warn("%s: a reference nested in another cannot be converted: kept literal, check the value", field)
			run.WriteString(sub[0])
			continue
		}
		frag, c := ref(sub)
		if _, err := config.ReferencedNames(frag); c == refText && err != nil {
			// A form the host takes but mcpvisor rejects (Claude Code's
			// "${A:-x${B}}"): kept literal, so the entry stays valid.
			m.warn("%s: a reference mcpvisor cannot read (%v): kept literal, check the value", field, err)
			c = keepText
		}
		switch c {
		case keepText:
			run.WriteString(sub[0])
		case litText:
			run.WriteString(frag)
		case refText:
			lit := config.EscapeLiteral(run.String())
			run.Reset()
			if strings.HasSuffix(lit, "$") {
				// "$" then "${" reads as the escape "$${": no exact form.
				m.warn("%s: a \"$\" right before a reference cannot be written exactly; check the value", field)
			}
			b.WriteString(lit)
			b.WriteString(frag)
		}
	}
	run.WriteString(s[last:])
	b.WriteString(config.EscapeLiteral(run.String()))
	return b.String()
}

// literalDialect is a host that expands nothing (Claude Desktop, Zed,
// Codex, goose): every `${` is literal.
func literalDialect(_ *mapping, _ string, s string) string { return config.EscapeLiteral(s) }

// shellDialect is Claude Code's: `${VAR}` and `${VAR:-default}`, which
// mcpvisor reads the same way.
func shellDialect(m *mapping, field, s string) string {
	return rewrite(m, field, s, reBraces, func(sub []string) (string, conv) {
		if reShellRef.MatchString(sub[1]) {
			return sub[0], refText
		}
		return "", keepText
	})
}

// geminiDialect is Gemini CLI's: `$VAR` and `${VAR}`.
func geminiDialect(m *mapping, field, s string) string {
	return rewrite(m, field, s, reGemini, func(sub []string) (string, conv) {
		name := sub[1] + sub[2]
		if !reVarName.MatchString(name) {
			return "", keepText
		}
		if sub[1] != "" {
			// Gemini CLI keeps an unset $NAME as it is, so "pa$sword"
			// may be a password, not a variable; mcpvisor's ${NAME}
			// fails when unset. The name is not quoted: it may be part
			// of a secret.
			m.warn("%s: a bare $NAME became the reference ${NAME}, which fails when the variable is unset (Gemini CLI keeps the text): if it is not a variable, edit the value", field)
		}
		return "${" + name + "}", refText
	})
}

// opencodeDialect is opencode's `{env:VAR}` (as `${VAR:-}`: opencode
// reads an unset one as "", as the editors do `${env:VAR}`); `{file:path}`
// cannot be carried.
func opencodeDialect(m *mapping, field, s string) string {
	return rewrite(m, field, s, reOpencode, func(sub []string) (string, conv) {
		if sub[1] == "env" && reVarName.MatchString(sub[2]) {
			return "${" + sub[2] + ":-}", refText
		}
		if sub[1] == "file" {
			m.warn("%s: opencode reads part of it from a file ({file:...}), which mcpvisor cannot: kept literal, replace it", field)
		}
		return "", keepText
	})
}

// editorVars are the values of the predefined variables of VS Code-style
// hosts (VS Code, Cursor, Windsurf) for one file.
type editorVars struct {
	host      string // for warnings
	envOnly   bool   // Windsurf: only ${env:} and ${file:}, no editor variables
	home      string
	workspace string // "" for a user file
	sep       string
}

// dialect returns the translation of `${env:VAR}` (as `${VAR:-}`: the
// editor reads an unset one as ""), `${input:ID}`,
// `${userHome}`, `${workspaceFolder}`, `${workspaceFolderBasename}`,
// `${pathSeparator}` and `${/}`; what is left is kept literal with a
// warning.
func (v editorVars) dialect() dialect {
	return func(m *mapping, field, s string) string {
		return rewrite(m, field, s, reBraces, func(sub []string) (string, conv) {
			body := sub[1]
			kind, arg, _ := strings.Cut(body, ":")
			switch {
			case kind == "env" && reVarName.MatchString(arg):
				// The editor makes an unset variable "": so does an
				// empty default, still a reference.
				return "${" + arg + ":-}", refText
			case kind == "file":
				m.warn("%s: %s reads part of it from a file (${file:...}), which mcpvisor cannot: kept literal, replace it", field, v.host)
				return "", keepText
			case v.envOnly:
				m.warn("%s: a %s variable mcpvisor does not know is kept literal", field, v.host)
				return "", keepText
			case kind == "input":
				name := inputVariable(arg)
				m.warn("%s: %s prompts for input %q; mcpvisor reads it from the environment variable %s instead", field, v.host, arg, name)
				return "${" + name + "}", refText
			case body == "userHome" && v.home != "":
				return v.home, litText
			case (body == "workspaceFolder" || body == "workspaceRoot") && v.workspace != "":
				return v.workspace, litText
			case body == "workspaceFolderBasename" && v.workspace != "":
				return lastElem(v.workspace), litText
			case body == "pathSeparator" || body == "/":
				return v.sep, litText
			default:
				m.warn("%s: a %s variable mcpvisor does not know is kept literal", field, v.host)
			}
			return "", keepText
		})
	}
}

// inputVariable names the environment variable that stands for a prompted
// input: its id in upper case, other characters as '_'.
func inputVariable(id string) string {
	var b strings.Builder
	for i, r := range strings.ToUpper(id) {
		switch {
		case 'A' <= r && r <= 'Z' || r == '_' || '0' <= r && r <= '9' && i > 0:
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "INPUT"
	}
	return b.String()
}

func lastElem(p string) string {
	p = strings.TrimRight(p, `/\`)
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return p
}
