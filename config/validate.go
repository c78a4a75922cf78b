package config

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
)

// maxNameLen is the longest server name. Names become tool-name prefixes
// ("{server}__{tool}", at most 64 characters), so they must leave room.
const maxNameLen = 48

// ValidateName reports whether name can name a server: 1 to 48 ASCII
// letters, digits, '_' or '-'. The error is a *FieldError for "name".
func ValidateName(name string) error {
	switch {
	case validName(name):
		return nil
	case name == "":
		return fieldErr("name", "required")
	default:
		return fieldErr("name", invalidName(name))
	}
}

func validName(name string) bool {
	ok := name != "" && len(name) <= maxNameLen
	for i := 0; ok && i < len(name); i++ {
		ok = isNameByte(name[i])
	}
	return ok
}

func invalidName(name string) string {
	return fmt.Sprintf("%s is not a valid server name: use 1 to %d letters, digits, '_' or '-'", quote(name), maxNameLen)
}

func isNameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-'
}

// Validate reports the first problem with s, as a *FieldError naming the
// field, or nil. Fields are checked in file order: name, type, command, env,
// url, headers, auth, timeout_seconds.
//
// Fields that the type does not use (a command on an http server) are not
// errors: they are kept so that switching the type back restores them.
func (s Server) Validate() error {
	if err := ValidateName(s.Name); err != nil {
		return err
	}
	if err := s.validate(); err != nil {
		return err.inServer(s.Name)
	}
	return nil
}

func (s Server) validate() *FieldError {
	switch s.Type {
	case TypeLocal:
		if len(s.Command) == 0 {
			return fieldErr("command", `required for type "local"`)
		}
		if s.Command[0] == "" {
			return fieldErr("command", "the first element, the program, must not be empty")
		}
	case TypeHTTP, TypeSSE:
		if s.URL == "" {
			return fieldErr("url", fmt.Sprintf("required for type %q", s.Type))
		}
	case "":
		return fieldErr("type", `required: "local", "http" or "sse"`)
	default:
		return fieldErr("type", fmt.Sprintf(`unknown type %s: want "local", "http" or "sse"`, quote(s.Type)))
	}
	for i, arg := range s.Command {
		if strings.ContainsRune(arg, 0) {
			return fieldErr(fmt.Sprintf("command[%d]", i), "must not contain NUL")
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.Env)) {
		switch {
		case k == "":
			return fieldErr("env", "names must not be empty")
		case strings.ContainsAny(k, "=\x00"):
			return fieldErr(keyPath("env", k), "name must not contain '=' or NUL")
		case strings.ContainsRune(s.Env[k], 0):
			return fieldErr(keyPath("env", k), "value must not contain NUL")
		}
	}
	if s.URL != "" && !validHTTPURL(s.URL) {
		// The URL is not quoted: its userinfo may hold a password.
		return fieldErr("url", "must be an absolute http:// or https:// URL with a host")
	}
	for _, k := range slices.Sorted(maps.Keys(s.Headers)) {
		if !validHeaderName(k) {
			return fieldErr(keyPath("headers", k), "not a valid HTTP header name")
		}
		if !validHeaderValue(s.Headers[k]) {
			return fieldErr(keyPath("headers", k), "value must not contain control characters")
		}
	}
	if err := s.Auth.validate(); err != nil {
		return err
	}
	if s.timeoutZero || s.TimeoutSeconds < 0 || s.TimeoutSeconds > MaxTimeoutSeconds {
		return fieldErr("timeout_seconds", fmt.Sprintf(
			"must be between 1 and %d (leave it out for the default of %d)", MaxTimeoutSeconds, DefaultTimeoutSeconds))
	}
	return nil
}

// validate checks that a has a known kind, what that kind needs, and
// nothing that another kind uses: a leftover secret is a mistake to report,
// not a credential to carry along silently.
func (a *Auth) validate() *FieldError {
	if a == nil {
		return nil
	}
	unused := func(field string) *FieldError {
		return fieldErr(field, fmt.Sprintf("not used with kind %q", a.Kind))
	}
	switch a.Kind {
	case AuthNone, AuthBearer, AuthOAuth:
	case "":
		return fieldErr("auth.kind", `required: "none", "bearer" or "oauth"`)
	default:
		return fieldErr("auth.kind", fmt.Sprintf(`unknown kind %s: want "none", "bearer" or "oauth"`, quote(a.Kind)))
	}
	if a.Kind == AuthBearer {
		if a.Token == "" {
			return fieldErr("auth.token", `required for kind "bearer"`)
		}
		if !validHeaderValue(a.Token) {
			return fieldErr("auth.token", "must not contain control characters")
		}
	} else if a.Token != "" {
		return unused("auth.token")
	}
	if a.Kind != AuthOAuth {
		switch {
		case a.ClientID != "":
			return unused("auth.client_id")
		case a.ClientSecret != "":
			return unused("auth.client_secret")
		case len(a.Scopes) > 0:
			return unused("auth.scopes")
		}
		return nil
	}
	if a.ClientSecret != "" && a.ClientID == "" {
		return fieldErr("auth.client_secret", "requires auth.client_id")
	}
	for i, sc := range a.Scopes {
		// RFC 6749 section 3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E )
		ok := sc != ""
		for j := 0; ok && j < len(sc); j++ {
			c := sc[j]
			ok = c >= 0x21 && c <= 0x7e && c != '"' && c != '\\'
		}
		if !ok {
			return fieldErr(fmt.Sprintf("auth.scopes[%d]", i), "not a valid OAuth scope")
		}
	}
	return nil
}

func validHTTPURL(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.Hostname() != ""
}

// validHeaderName reports whether name is an RFC 9110 token.
func validHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !isNameByte(c) && !strings.ContainsRune("!#$%&'*+.^`|~", rune(c)) {
			return false
		}
	}
	return true
}

// validHeaderValue rejects the control characters (all but horizontal tab)
// that net/http refuses to send.
func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}
