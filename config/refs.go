package config

import (
	"fmt"
	"slices"
	"strings"
)

// References: a value of command, cwd, env, url, headers or an auth secret
// may refer to the runtime's environment (DESIGN K1):
//
//	${NAME}            the variable NAME; an error at connect when unset
//	${NAME:-default}   NAME when set and not empty, else default
//	${env:NAME}        the same as ${NAME} (the VS Code and Cursor spelling),
//	                   also with :-default
//	$${                a literal "${"
//
// Only "${" starts a reference: every other "$" is literal, so a stored
// "pa$$w0rd" keeps the meaning it had before references existed. A NAME is
// ASCII letters, digits and '_', not starting with a digit. A default is
// literal text up to the first '}'; it cannot hold a reference.
//
// The file always keeps the reference: only [Server.Expand], at connect,
// replaces it, on a copy that is never saved.

// piece is a part of a parsed value: literal text, or a reference when ref
// is set. raw is the part as written ("$${" escapes included).
type piece struct {
	lit string
	ref *reference
	raw string
}

// reference is one ${...} of a value.
type reference struct {
	name       string
	def        string
	hasDefault bool
}

// refError is a malformed reference. It names a byte offset and never
// quotes the value: the value may be a secret.
type refError struct {
	offset int
	msg    string
}

func (e *refError) Error() string {
	return fmt.Sprintf("malformed reference at byte %d: %s (write $${ for a literal ${)", e.offset, e.msg)
}

// parseRefs splits v into literal text and references.
func parseRefs(v string) ([]piece, *refError) {
	var out []piece
	var lit strings.Builder
	start := 0 // of the literal being built
	flush := func(end int) {
		if lit.Len() > 0 {
			out = append(out, piece{lit: lit.String(), raw: v[start:end]})
			lit.Reset()
		}
	}
	for i := 0; i < len(v); {
		switch {
		case strings.HasPrefix(v[i:], "$${"):
			lit.WriteString("${")
			i += 3
		case strings.HasPrefix(v[i:], "${"):
			end := strings.IndexByte(v[i+2:], '}')
			if end < 0 {
				return nil, &refError{offset: i, msg: "${ is not closed by }"}
			}
			ref, err := parseRefBody(v[i+2 : i+2+end])
			if err != nil {
				err.offset = i
				return nil, err
			}
			flush(i)
			out = append(out, piece{ref: ref, raw: v[i : i+3+end]})
			i += 2 + end + 1
			start = i
		default:
			lit.WriteByte(v[i])
			i++
		}
	}
	flush(len(v))
	return out, nil
}

// parseRefBody parses what is between "${" and "}".
func parseRefBody(body string) (*reference, *refError) {
	body = strings.TrimPrefix(body, "env:")
	n := 0
	for n < len(body) && isVarByte(body[n], n == 0) {
		n++
	}
	ref := &reference{name: body[:n]}
	rest := body[n:]
	switch {
	case n == 0:
		return nil, &refError{msg: "want a variable name of letters, digits and '_', not starting with a digit: ${NAME}, ${NAME:-default} or ${env:NAME}"}
	case rest == "":
	case strings.HasPrefix(rest, ":-"):
		ref.def, ref.hasDefault = rest[2:], true
		if strings.Contains(ref.def, "${") {
			return nil, &refError{msg: "a default cannot hold a reference"}
		}
	default:
		return nil, &refError{msg: "want ${NAME}, ${NAME:-default} or ${env:NAME}; a variable name is letters, digits and '_'"}
	}
	return ref, nil
}

func isVarByte(c byte, first bool) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' || !first && '0' <= c && c <= '9'
}

// hasRefs reports whether v holds at least one well-formed reference.
func hasRefs(v string) bool {
	if !strings.Contains(v, "${") {
		return false
	}
	ps, err := parseRefs(v)
	return err == nil && slices.ContainsFunc(ps, func(p piece) bool { return p.ref != nil })
}

// EscapeLiteral returns the value that expands to s itself: every "${" of
// s becomes "$${". An importer uses it for a value that another host holds
// as literal text, so that mcpvisor never reads part of it as a reference.
func EscapeLiteral(s string) string {
	return strings.ReplaceAll(s, "${", "$${")
}

// ReferencedNames returns the variable names v refers to, in order of
// first appearance and without duplicates, or an error if a reference in
// v is malformed. The error gives a byte offset and never quotes v. An
// importer uses it to tell the user which variables a server needs.
func ReferencedNames(v string) ([]string, error) {
	ps, err := parseRefs(v)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, p := range ps {
		if p.ref != nil && !slices.Contains(names, p.ref.name) {
			names = append(names, p.ref.name)
		}
	}
	return names, nil
}

// RequiredNames returns the variables v refers to without a default
// (those a connect fails on when unset), as [ReferencedNames] does. An
// importer lists them as what the user must supply.
func RequiredNames(v string) ([]string, error) {
	ps, err := parseRefs(v)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, p := range ps {
		if p.ref != nil && !p.ref.hasDefault && !slices.Contains(names, p.ref.name) {
			names = append(names, p.ref.name)
		}
	}
	return names, nil
}

// UnsetVariableError reports a reference to a variable that is not set
// and has no default. It names the variable only when the name is
// [EnvShaped]: any other name may be a pasted secret, and Name is then "".
type UnsetVariableError struct {
	Name string
}

// Error says which variable is unset and how to fix it, without the name
// when it is not [EnvShaped] (it may be a pasted secret).
func (e *UnsetVariableError) Error() string {
	if e.Name == "" {
		return "references an unset variable whose name is not shaped like an environment variable (upper-case letters, digits and '_', not looking generated; a secret pasted inside ${…}?): set it, or give a default"
	}
	return fmt.Sprintf("references ${%s}, which is not set in mcpvisor's environment (set it, or give a default: ${%s:-value})", e.Name, e.Name)
}

// unsetVariable is the error for the unset name.
func unsetVariable(name string) *UnsetVariableError {
	if !EnvShaped(name) {
		name = ""
	}
	return &UnsetVariableError{Name: name}
}

// ExpandValue replaces the references of v by the values lookup gives
// (os.LookupEnv, typically) and turns each "$${" into "${". The error is a
// malformed reference, or an *UnsetVariableError for the first variable
// that is unset and has no default; neither quotes v.
func ExpandValue(v string, lookup func(string) (string, bool)) (string, error) {
	out, _, err := expandValue(v, lookup)
	return out, err
}

// expandValue is ExpandValue that also returns what each reference
// became.
func expandValue(v string, lookup func(string) (string, bool)) (string, []string, error) {
	if !strings.Contains(v, "${") {
		return v, nil, nil
	}
	ps, rerr := parseRefs(v)
	if rerr != nil {
		return "", nil, rerr
	}
	var parts []string
	var b strings.Builder
	for _, p := range ps {
		if p.ref == nil {
			b.WriteString(p.lit)
			continue
		}
		val, ok := lookup(p.ref.name)
		switch {
		case p.ref.hasDefault && (!ok || val == ""):
			val = p.ref.def
		case !ok:
			return "", nil, unsetVariable(p.ref.name)
		}
		b.WriteString(val)
		parts = append(parts, val)
	}
	return b.String(), parts, nil
}

// pastedNames returns the referenced names of v that are not
// [EnvShaped]: each may be a secret pasted inside braces.
func pastedNames(v string) []string {
	names, err := ReferencedNames(v)
	if err != nil {
		return nil
	}
	return slices.DeleteFunc(names, EnvShaped)
}

// referenceOnly reports whether v holds no secret of its own: one or more
// references without a default (an empty default is allowed), each to an
// [EnvShaped] name, optionally after a known scheme word (schemeWord) and
// one space ("Bearer ${TOKEN}"). A default is literal text and may be a
// secret, and so may a name of another shape ("${ghp_abc…}"), so a value
// with either is not reference-only.
func referenceOnly(v string) bool {
	if word, rest, ok := strings.Cut(v, " "); ok && schemeWord(word) {
		v = rest
	}
	ps, err := parseRefs(v)
	if err != nil || len(ps) == 0 {
		return false
	}
	for _, p := range ps {
		if p.ref == nil || p.ref.def != "" || !EnvShaped(p.ref.name) {
			return false
		}
	}
	return true
}

// ReferenceOnly reports whether v, the value of a secret field, holds no
// secret of its own, so that the names it refers to may be shown: the rule
// of the masked view's reference form (see referenceOnly).
func ReferenceOnly(v string) bool { return referenceOnly(v) }

// schemeWord reports whether w is a known authorization scheme, in any
// case: only a word that is one holds no secret. Any other word before a
// reference ("correcthorsebatterystaple ${SUFFIX}") may be a secret.
func schemeWord(w string) bool {
	switch strings.ToLower(w) {
	case "bearer", "basic", "token", "bot", "digest", "apikey", "api-key", "key",
		"oauth", "dpop", "negotiate", "ssws", "sso-key":
		return true
	}
	return false
}
