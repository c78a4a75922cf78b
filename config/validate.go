package config

import (
	"fmt"
	"maps"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
)

// MaxNameLen is the longest server name [ValidateName] accepts. Names become tool-name prefixes
// ("{server}__{tool}", at most 64 characters), so they must leave room.
const MaxNameLen = 48

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
	ok := name != "" && len(name) <= MaxNameLen
	for i := 0; ok && i < len(name); i++ {
		ok = isNameByte(name[i])
	}
	return ok
}

func invalidName(name string) string {
	return fmt.Sprintf("%s is not a valid server name: use 1 to %d letters, digits, '_' or '-'", quote(name), MaxNameLen)
}

func isNameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-'
}

// Validate reports the first problem with s, as a *FieldError naming the
// field, or nil. Malformed references (see [Server.Expand]) come first,
// in the order of the fields that may hold them; then fields are checked in
// file order: name, type, command, cwd, env, url, headers, auth, timeout_seconds, max_concurrent_calls,
// connect_timeout_seconds, max_call_seconds, max_output_bytes,
// max_media_bytes, protocol_version, tools.
//
// Fields that the type does not use (a command on an http server) are not
// errors: they are kept so that switching the type back restores them. The
// exception is an OAuth auth kind ("oauth", "client_credentials") on a type
// other than "http": that would not be a leftover but a server that cannot
// authenticate, so it is reported on "auth.kind".
//
// A value that holds references is checked as far as its final value is
// known: a url, a cwd or a private key made with a reference is checked
// at connect, by [Server.Expand].
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
	if err := s.checkRefs(); err != nil {
		return err
	}
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
	if err := s.validateCwd(); err != nil {
		return err
	}
	for _, k := range slices.Sorted(maps.Keys(s.Env)) {
		switch {
		case k == "":
			return fieldErr("env", "names must not be empty")
		case strings.ContainsAny(k, "=\x00"):
			return fieldErr(keyPath("env", k), "name must not contain '=' or NUL")
		case !validEnvValue(s.Env[k]):
			return fieldErr(keyPath("env", k), `value must not contain NUL or other control characters: only tab, newline and a CR before a newline (a PEM key's line ends)`)
		}
	}
	if s.URL != "" && !s.refsIn(s.URL) && !validHTTPURL(s.URL) {
		// The URL is not quoted: its userinfo may hold a password.
		return fieldErr("url", "must be an absolute http:// or https:// URL with a host")
	}
	spelled := make(map[string]string, len(s.Headers))
	for _, k := range slices.Sorted(maps.Keys(s.Headers)) {
		if prev, ok := spelled[headerKeys.same(k)]; ok {
			return duplicateKey("headers", prev, k)
		}
		spelled[headerKeys.same(k)] = k
		if !validHeaderName(k) {
			return fieldErr(keyPath("headers", k), "not a valid HTTP header name")
		}
		if !validHeaderValue(s.Headers[k]) {
			return fieldErr(keyPath("headers", k), "value must not contain control characters")
		}
	}
	if err := s.Auth.validate(s.Type, s.refsIn); err != nil {
		return err
	}
	if s.timeoutZero || s.TimeoutSeconds < 0 || s.TimeoutSeconds > MaxTimeoutSeconds {
		return fieldErr("timeout_seconds", fmt.Sprintf(
			"must be between 1 and %d (leave it out for the default of %d)", MaxTimeoutSeconds, DefaultTimeoutSeconds))
	}
	if s.MaxConcurrentCalls < 0 || s.MaxConcurrentCalls > MaxConcurrentCallsLimit {
		return fieldErr("max_concurrent_calls", fmt.Sprintf(
			"must be between 0 (unlimited, the default) and %d", MaxConcurrentCallsLimit))
	}
	if err := s.validateLimits(false); err != nil {
		return err
	}
	return s.Tools.validate()
}

// validate checks that a has a known kind that fits the server type, what
// that kind needs, and nothing that another kind uses: a leftover secret is
// a mistake to report, not a credential to carry along silently.
//
// refsIn reports whether a value holds references, whose final value is
// checked only once expanded.
func (a *Auth) validate(serverType string, refsIn func(string) bool) *FieldError {
	if a == nil {
		return nil
	}
	const kinds = `"none", "bearer", "oauth" or "client_credentials"`
	switch {
	case a.Kind == "":
		return fieldErr("auth.kind", "required: "+kinds)
	case !knownKind(a.Kind):
		return fieldErr("auth.kind", fmt.Sprintf("unknown kind %s: want %s", quote(a.Kind), kinds))
	case slices.Contains(oauthKinds, a.Kind) && serverType != TypeHTTP:
		// MCP authorization came with the revision that replaced HTTP+SSE
		// by Streamable HTTP; mcpvisor does OAuth on the latter only.
		return fieldErr("auth.kind", fmt.Sprintf(
			`kind %q needs Streamable HTTP: OAuth works only with type "http", not %q`, a.Kind, serverType))
	}
	for _, f := range authFields {
		if f.isSet(a) && !slices.Contains(f.kinds, a.Kind) {
			return fieldErr("auth."+f.name, fmt.Sprintf("not used with kind %q", a.Kind))
		}
	}
	switch a.Kind {
	case AuthBearer:
		if a.Token == "" {
			return fieldErr("auth.token", `required for kind "bearer"`)
		}
		if !validHeaderValue(a.Token) {
			return fieldErr("auth.token", "must not contain control characters")
		}
	case AuthOAuth:
		if a.ClientSecret != "" && a.ClientID == "" {
			return fieldErr("auth.client_secret", "requires auth.client_id")
		}
		if a.ClientMetadataURL != "" {
			if msg := metadataURLProblem(a.ClientMetadataURL); msg != "" {
				return fieldErr("auth.client_metadata_url", msg)
			}
		}
	case AuthClientCredentials:
		if err := a.validateClientCredentials(refsIn(a.PrivateKey)); err != nil {
			return err
		}
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

// validateClientCredentials checks the client id, that there is exactly one
// credential, and that the method and algorithm fit it. A keyRef private
// key (one made with references) is parsed only once expanded.
func (a *Auth) validateClientCredentials(keyRef bool) *FieldError {
	if a.ClientID == "" {
		return fieldErr("auth.client_id", `required for kind "client_credentials"`)
	}
	switch a.TokenEndpointAuthMethod {
	case "", AuthMethodClientSecretBasic, AuthMethodClientSecretPost, AuthMethodPrivateKeyJWT:
	default:
		return fieldErr("auth.token_endpoint_auth_method", fmt.Sprintf(
			`unknown method %s: want "client_secret_basic", "client_secret_post" or "private_key_jwt"`,
			quote(a.TokenEndpointAuthMethod)))
	}
	switch {
	case a.ClientSecret == "" && a.PrivateKey == "":
		return fieldErr("auth.client_secret", `kind "client_credentials" needs a credential: auth.client_secret or auth.private_key`)
	case a.ClientSecret != "" && a.PrivateKey != "":
		return fieldErr("auth.private_key", "set either auth.client_secret or auth.private_key, not both")
	}
	method := a.TokenAuthMethod()
	if method == AuthMethodPrivateKeyJWT && a.PrivateKey == "" {
		return fieldErr("auth.token_endpoint_auth_method", fmt.Sprintf("%q needs auth.private_key, not auth.client_secret", method))
	}
	if method != AuthMethodPrivateKeyJWT && a.ClientSecret == "" {
		return fieldErr("auth.token_endpoint_auth_method", fmt.Sprintf("%q needs auth.client_secret, not auth.private_key", method))
	}
	if a.PrivateKey == "" {
		if a.SigningAlg != "" {
			return fieldErr("auth.signing_algorithm", "requires auth.private_key")
		}
		return nil
	}
	if keyRef {
		return nil
	}
	key, err := a.keyInfo()
	if err != nil {
		return err
	}
	switch {
	case a.SigningAlg == "" || slices.Contains(key.algs, a.SigningAlg):
	case !slices.Contains([]string{AlgES256, AlgES384, AlgRS256, AlgPS256}, a.SigningAlg):
		return fieldErr("auth.signing_algorithm", fmt.Sprintf(
			`unknown algorithm %s: want "ES256", "ES384", "RS256" or "PS256"`, quote(a.SigningAlg)))
	default:
		return fieldErr("auth.signing_algorithm", fmt.Sprintf(
			"%q does not fit %s: use %s", a.SigningAlg, key.desc, orList(key.algs)))
	}
	return nil
}

// refsIn reports whether v, a value of s, holds references: always false
// once s is expanded.
func (s Server) refsIn(v string) bool { return !s.expanded && hasRefs(v) }

// validateCwd checks that the working directory is absolute, unless
// references make it known only at connect. Whether it exists is checked
// at connect too: a directory may come and go.
func (s Server) validateCwd() *FieldError {
	switch {
	case s.Cwd == "" || s.refsIn(s.Cwd):
		return nil
	case strings.ContainsRune(s.Cwd, 0):
		return fieldErr("cwd", "must not contain NUL")
	case !filepath.IsAbs(s.Cwd):
		return fieldErr("cwd", fmt.Sprintf("%s is not an absolute path (a reference such as ${HOME}/src is expanded at connect)", quote(s.Cwd)))
	}
	return nil
}

// metadataURLProblem checks a Client ID Metadata Document URL by the rules
// the draft (draft-ietf-oauth-client-id-metadata-document) sets for a URL
// that serves as a client id; it returns "" if the URL is fine. The URL is
// never quoted: it is not a secret, but a malformed one may hold anything.
func metadataURLProblem(raw string) string {
	u, err := url.Parse(raw)
	switch {
	case err != nil || u.Scheme != "https" || u.Opaque != "" || u.Hostname() == "":
		return "must be an absolute https:// URL with a host"
	case u.User != nil:
		return "must not contain a user name or password"
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return "must not contain a fragment"
	case u.Path == "" || u.Path == "/":
		return "must have a path, such as https://example.com/oauth/client.json: a client id URL is never the root of a site"
	}
	for seg := range strings.SplitSeq(u.Path, "/") {
		if seg == "." || seg == ".." {
			return `must not contain "." or ".." path segments`
		}
	}
	return ""
}

// orList formats ["a", "b"] as `"a" or "b"`.
func orList(vs []string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = fmt.Sprintf("%q", v)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
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
// validEnvValue reports whether v may be an env value: no C0 control
// character and no DEL, except tab and newline, which multi-line values
// such as PEM keys hold, and a CR right before a newline (a key pasted
// with Windows line ends). A BEL or ESC in a value is no variable's
// business, and would reach a terminal the process prints it to; NUL
// cannot cross exec at all.
func validEnvValue(v string) bool {
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '\t' || c == '\n':
		case c == '\r' && i+1 < len(v) && v[i+1] == '\n':
		case c < 0x20 || c == 0x7f:
			return false
		}
	}
	return true
}

func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}
