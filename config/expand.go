package config

import (
	"fmt"
	"maps"
	"os"
	"slices"
)

// refFields calls visit with the path and a pointer to each value of s
// that may hold references, and whether it is a secret, in file order:
// command, cwd, env, url, headers, auth.token, auth.client_secret,
// auth.private_key. visit may change the value; s must own its maps and
// Auth (a Clone). It stops at the first visit that returns false.
func (s *Server) refFields(visit func(path string, secret bool, v *string) bool) {
	for i := range s.Command {
		if !visit(fmt.Sprintf("command[%d]", i), false, &s.Command[i]) {
			return
		}
	}
	if !visit("cwd", false, &s.Cwd) {
		return
	}
	if !visitMap("env", s.Env, visit) {
		return
	}
	// The URL is not a secret as a whole; its userinfo, query values and
	// fragment are, and Secrets finds them in the expanded URL; what a
	// reference anywhere but its scheme, host or port became is one too
	// (expandFields, urlRefSecrets).
	if !visit("url", false, &s.URL) {
		return
	}
	if !visitMap("headers", s.Headers, visit) {
		return
	}
	if s.Auth == nil {
		return
	}
	for _, p := range []struct {
		path string
		v    *string
	}{{"auth.token", &s.Auth.Token}, {"auth.client_secret", &s.Auth.ClientSecret}, {"auth.private_key", &s.Auth.PrivateKey}} {
		if !visit(p.path, true, p.v) {
			return
		}
	}
}

// visitMap visits m's values (secrets) in key order under field, writing
// back what visit leaves, and reports whether every visit returned true.
func visitMap(field string, m map[string]string, visit func(path string, secret bool, v *string) bool) bool {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := m[k]
		ok := visit(keyPath(field, k), true, &v)
		m[k] = v
		if !ok {
			return false
		}
	}
	return true
}

// checkRefs reports the first malformed reference of s, naming its field.
func (s Server) checkRefs() *FieldError {
	if s.expanded {
		return nil
	}
	var ferr *FieldError
	s = s.Clone() // refFields writes back; s's maps are not ours
	s.refFields(func(path string, _ bool, v *string) bool {
		if _, err := parseRefs(*v); err != nil {
			ferr = fieldErr(path, err.Error())
		}
		return ferr == nil
	})
	return ferr
}

// Expand returns a copy of s with every reference replaced by its value
// from lookup (nil: os.LookupEnv), then, if s held any, validated as a
// whole: a value a reference brought in must fit its field as a literal
// one would. It is
// what a connect uses, and only a connect: the copy is marked expanded,
// its values are never read as references again, [Marshal] refuses to
// write it, and its view masks every secret.
//
// The error is a *FieldError naming the field: a malformed reference, a
// variable that is unset and has no default (naming the variable, never a
// value), or a field whose expanded value is invalid. It is never a
// reason to retry: the environment of a running process does not change.
// An expanded s is returned as is.
func (s Server) Expand(lookup func(string) (string, bool)) (Server, error) {
	if s.expanded {
		return s, nil
	}
	if lookup == nil {
		lookup = os.LookupEnv
	}
	x := s.Clone()
	refs, ferr := x.expandFields(lookup, true)
	if ferr != nil {
		return Server{}, ferr.inServer(s.Name)
	}
	if s.Cwd != "" && x.Cwd == "" {
		// "" means mcpvisor's own directory: a cwd whose variables are
		// empty must not silently become that.
		return Server{}, fieldErr("cwd", "its references expanded to an empty path (set the variables, or remove cwd to run in mcpvisor's directory)").inServer(s.Name)
	}
	x.expanded = true
	if x.Auth != nil {
		x.Auth.parseKey()
	}
	if !refs {
		// Nothing came in: s is as valid as its caller found it (a
		// connect only ever expands a validated server).
		return x, nil
	}
	if err := x.validate(); err != nil {
		if hasRefs(fieldValue(s, err.Field)) {
			err.Message = "after expanding references: " + err.Message
		}
		return Server{}, err.inServer(s.Name)
	}
	return x, nil
}

// expandFields replaces the references of x's fields (x owns its maps:
// a Clone) by their values from lookup and collects what each reference
// of a secret field became. A field that fails is left "" (nothing came
// into it) with its error; stop ends at the first, else every other
// field is still expanded. refs reports whether any field held one.
func (x *Server) expandFields(lookup func(string) (string, bool), stop bool) (refs bool, ferr *FieldError) {
	x.refFields(func(path string, secret bool, v *string) bool {
		refs = refs || hasRefs(*v)
		val, parts, err := expandValue(*v, lookup)
		if err != nil {
			*v = ""
			if ferr == nil {
				ferr = fieldErr(path, err.Error())
			}
			return !stop
		}
		orig := *v
		*v = val
		switch {
		case secret:
			// A server may echo one variable's value alone, not the
			// whole field ("Bearer " + it): each is a secret.
			x.refValues = append(x.refValues, parts...)
		case path == "url":
			// A reference in the path (or the userinfo, query or
			// fragment) may bring a key: what it became is a secret.
			for i, sec := range urlRefSecrets(orig) {
				if sec && i < len(parts) {
					x.refValues = append(x.refValues, parts[i])
				}
			}
		}
		return true
	})
	return refs, ferr
}

// ExpandedSecrets returns the secrets of s ([Server.Secrets]) and those
// of its expansion from lookup (nil: os.LookupEnv): each secret field's
// expanded value and what each of its references became, as the copy
// [Server.Expand] returns holds them. It is there for when Expand fails:
// an error made after expanding (validating an expanded value, a later
// step of the connect) may hold an expanded value, and its scrubber must
// know it. Every field that expands counts, whether or not another fails
// or the whole validates.
func (s Server) ExpandedSecrets(lookup func(string) (string, bool)) []string {
	if s.expanded {
		return s.Secrets()
	}
	if lookup == nil {
		lookup = os.LookupEnv
	}
	x := s.Clone()
	x.expandFields(lookup, false)
	x.expanded = true
	out := s.Secrets()
	for _, v := range x.Secrets() {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// Expanded reports whether s came from [Server.Expand].
func (s Server) Expanded() bool { return s.expanded }

// fieldValue returns the value at path among the reference fields of s,
// "" for another path.
func fieldValue(s Server, path string) string {
	var out string
	s = s.Clone()
	s.refFields(func(p string, _ bool, v *string) bool {
		if p == path {
			out = *v
			return false
		}
		return true
	})
	return out
}
