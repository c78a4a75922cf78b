package config

import (
	"encoding/base64"
	"encoding/json"
	"maps"
	"net/url"
	"slices"
	"time"
)

// FileName is the name of the configuration file inside the state dir.
const FileName = "mcp_servers.json"

// DefaultTimeoutSeconds is the per-call timeout of a server whose entry has
// no timeout_seconds, and through it the connect timeout of one that has
// no connect_timeout_seconds either.
const DefaultTimeoutSeconds = 30

// MaxTimeoutSeconds is the largest timeout_seconds [Server.Validate]
// accepts. A longer wait is taken to be a typo rather than a wish.
const MaxTimeoutSeconds = 3600

// MaxConcurrentCallsLimit is the largest max_concurrent_calls
// [Server.Validate] accepts.
const MaxConcurrentCallsLimit = 1024

// Server types: how mcpvisor reaches a server.
const (
	TypeLocal = "local" // a stdio subprocess started from Command
	TypeHTTP  = "http"  // Streamable HTTP at URL
	TypeSSE   = "sse"   // the legacy HTTP+SSE transport at URL
)

// Server is one entry of the file: the configuration of one MCP server.
//
// The zero value is not a usable server: Enabled is false and Type is empty.
// Entries from [Parse] and [DecodeServer] are enabled unless the JSON says
// otherwise.
//
// Formatting a Server with fmt, encoding/json or log/slog yields the masked
// [ServerView], so a Server may be logged as is.
type Server struct {
	// Name identifies the server. It is the key of the entry in "servers",
	// never a field inside it. See [ValidateName].
	Name string
	// Type is TypeLocal, TypeHTTP or TypeSSE.
	Type string
	// Command is the argv of a local server; Command[0] is the program.
	// Each element may hold references (see [Server.Expand]).
	Command []string
	// Cwd is the working directory of a local server's process; "" means
	// mcpvisor's own. It must be absolute once its references are
	// expanded, and exist when the server connects.
	Cwd string
	// Env is merged over the parent's environment for a local server.
	// Every value is a secret, and may hold references. A value holds no
	// control character but tab, newline and a CR before a newline
	// (multi-line PEM keys); NUL, BEL, ESC, DEL and the rest are refused,
	// as written or as expanded.
	Env map[string]string
	// URL is the endpoint of an http or sse server.
	URL string
	// Headers are sent with every request to a remote server. Every value
	// is a secret, and may hold references.
	Headers map[string]string
	// Auth is how a remote server authenticates us; nil means AuthNone.
	Auth *Auth
	// Enabled reports whether the server is started. Absent in the file
	// means true.
	Enabled bool
	// TimeoutSeconds is the per-call timeout; 0 means
	// DefaultTimeoutSeconds. Use [Server.Timeout] to read it.
	TimeoutSeconds int
	// ConnectTimeoutSeconds bounds one connect: spawn (or first request)
	// to initialized and listed. 0 means the effective TimeoutSeconds, so
	// that an entry written before the two were split keeps its meaning.
	// Use [Server.ConnectTimeout] to read it.
	ConnectTimeoutSeconds int
	// MaxCallSeconds caps a call whose timeout progress notifications keep
	// restarting; 0 means 10 × the call timeout, at most
	// MaxCallSecondsLimit. Use [Server.MaxCallDuration] to read it.
	MaxCallSeconds int
	// MaxOutputBytes caps the text of one tool result that reaches the
	// model; 0 means DefaultMaxOutputBytes, -1 no cap. Use
	// [Server.OutputCaps] to read it.
	MaxOutputBytes int
	// MaxMediaBytes caps the image and audio data of one tool result; 0
	// means DefaultMaxMediaBytes, -1 no cap.
	MaxMediaBytes int
	// ProtocolVersion pins the MCP protocol version sent in initialize, for
	// a server that mishandles the newest; "" (the default) offers the
	// newest the SDK supports. See [SupportedProtocolVersions].
	ProtocolVersion string
	// Tools filters which of the server's tools are registered; the zero
	// value registers every tool.
	Tools ToolFilter
	// MaxConcurrentCalls bounds the tool calls in flight on the server at
	// once: 0 (the default) is unlimited, 1 is single-flight, N lets N
	// run while later calls wait their turn. At most
	// MaxConcurrentCallsLimit.
	MaxConcurrentCalls int

	// timeoutZero records an explicit "timeout_seconds": 0, which is an
	// error the user should see rather than a silent default.
	timeoutZero bool
	// zeros records the other explicit zeros that are errors (see
	// zeroField).
	zeros   zeroFields
	unknown []member // fields this version does not know
	// expanded marks the copy [Server.Expand] made for a connect: its
	// values are final, never references, and it must not be saved.
	expanded bool
	// refValues are the values the references of its secret fields
	// expanded to, each a secret of its own (see Secrets).
	refValues []string
}

// member is one field of a JSON object, kept in file order with its raw
// value so that fields this package does not interpret survive a round trip.
type member struct {
	key   string
	value json.RawMessage
}

// Timeout returns the effective per-call timeout: the default
// when TimeoutSeconds is not positive, and never more than
// MaxTimeoutSeconds, so that even an unvalidated Server yields a sane wait.
func (s Server) Timeout() time.Duration {
	n := s.TimeoutSeconds
	switch {
	case n <= 0:
		n = DefaultTimeoutSeconds
	case n > MaxTimeoutSeconds:
		n = MaxTimeoutSeconds
	}
	return time.Duration(n) * time.Second
}

// Clone returns a deep copy of s that shares no map, slice or Auth with it.
func (s Server) Clone() Server {
	c := s
	c.Command = slices.Clone(s.Command)
	c.Env = maps.Clone(s.Env)
	c.Headers = maps.Clone(s.Headers)
	if s.Auth != nil {
		a := s.Auth.clone()
		c.Auth = &a
	}
	c.Tools = s.Tools.clone()
	c.unknown = cloneMembers(s.unknown)
	c.refValues = slices.Clone(s.refValues)
	return c
}

func cloneMembers(ms []member) []member {
	if ms == nil {
		return nil
	}
	c := make([]member, len(ms))
	for i, m := range ms {
		c[i] = member{key: m.key, value: slices.Clone(m.value)}
	}
	return c
}

// Equal reports whether s and o configure the same server, secrets
// included; the manager uses it to decide whether a reload changed a server.
// A nil and an empty map or slice are equal, and a nil Auth equals an Auth
// of kind "none" with no other field. Unknown fields kept for round trips do
// not count: they cannot change how the server runs.
func (s Server) Equal(o Server) bool {
	return s.Name == o.Name &&
		s.Type == o.Type &&
		slices.Equal(s.Command, o.Command) &&
		s.Cwd == o.Cwd &&
		maps.Equal(s.Env, o.Env) &&
		s.URL == o.URL &&
		maps.Equal(s.Headers, o.Headers) &&
		authOrNone(s.Auth).equal(authOrNone(o.Auth)) &&
		s.Enabled == o.Enabled &&
		s.TimeoutSeconds == o.TimeoutSeconds &&
		s.timeoutZero == o.timeoutZero &&
		s.MaxConcurrentCalls == o.MaxConcurrentCalls &&
		s.ConnectTimeoutSeconds == o.ConnectTimeoutSeconds &&
		s.MaxCallSeconds == o.MaxCallSeconds &&
		s.MaxOutputBytes == o.MaxOutputBytes &&
		s.MaxMediaBytes == o.MaxMediaBytes &&
		s.zeros == o.zeros &&
		s.ProtocolVersion == o.ProtocolVersion &&
		s.Tools.equal(o.Tools)
}

// Secrets returns every non-empty secret value of s, without duplicates:
// env and header values, the bearer token, the client secret, the private
// key, and the secret parts of the URL (see urlparts.go): its userinfo's
// user and password, alone, as the "user:pass" pair and as that pair's
// base64, the Basic authentication credential (a server echoing the
// header may encode it once more, and the redactor derives the encoded
// forms of each value it is given), each query value and the fragment;
// the scheme, host and port are not secrets. Loggers use it to redact
// output of the server itself (for example a subprocess echoing its
// environment).
//
// A value made only of references to [EnvShaped] names
// ([SecretView.Reference]) holds no secret and is left out; a referenced
// name of another shape may be a pasted secret, and is one, alone as well; on the copy [Server.Expand] returns, the expanded values
// are secrets like any configured one, and so is what each reference of a
// secret field expanded to, alone (a server may echo the token of
// "Bearer ${TOKEN}" without the scheme), and of the URL outside its
// scheme, host and port. Values in the command or the cwd
// are not secrets.
//
// The private key comes whole and also line by line (each line of its PEM
// body longer than 16 characters): redactors work on one line at a time,
// and a multi-line value never matches within one line.
func (s Server) Secrets() []string {
	var out []string
	add := func(v string) {
		if v != "" && !slices.Contains(out, v) && (s.expanded || !referenceOnly(v)) {
			out = append(out, v)
			if !s.expanded {
				// "Bearer ${ghp_abc…}": the name may be the secret, and
				// an error or a log may show it without the rest.
				for _, n := range pastedNames(v) {
					if !slices.Contains(out, n) {
						out = append(out, n)
					}
				}
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.Env)) {
		add(s.Env[k])
	}
	for _, k := range slices.Sorted(maps.Keys(s.Headers)) {
		add(s.Headers[k])
	}
	if s.Auth != nil {
		add(s.Auth.Token)
		add(s.Auth.ClientSecret)
		if s.Auth.ClientSecret != "" && (s.expanded || !referenceOnly(s.Auth.ClientSecret)) {
			// HTTP Basic client authentication (client_secret_basic, and
			// x/oauth2's default for a confidential client) sends the
			// form-escaped id:secret pair in base64 (RFC 6749 §2.3.1):
			// that value is a secret of its own, kept for the whole life
			// of the connection like every configured one.
			pair := url.QueryEscape(s.Auth.ClientID) + ":" + url.QueryEscape(s.Auth.ClientSecret)
			add(pair)
			add(base64.StdEncoding.EncodeToString([]byte(pair)))
		}
		add(s.Auth.PrivateKey)
		for _, line := range pemSecretLines(s.Auth.PrivateKey) {
			add(line)
		}
	}
	for _, v := range s.refValues {
		add(v)
	}
	for _, v := range urlSecrets(s.URL, !s.expanded) {
		add(v)
	}
	return out
}

