package config

import (
	"encoding/json"
	"log/slog"
	"slices"
	"time"

)

// SecretView is the response form of one secret: whether it is set, and a
// mask that lets a user recognise it without revealing it.
//
// A value made only of references to environment-shaped names
// ([EnvShaped]), optionally after a known scheme word
// ("${GITHUB_TOKEN}", "Bearer ${GITHUB_TOKEN}"), holds no secret: it is
// shown as it is in Reference, {"has_value": true, "reference": "Bearer
// ${GITHUB_TOKEN}"}, without a mask. Any other value, one mixing literal
// text with a reference or a reference with a default included, is
// masked.
type SecretView struct {
	HasValue bool   `json:"has_value"`
	Masked   string `json:"masked"`
	// Reference is the value itself when it is made only of references,
	// "" otherwise; Masked is then "".
	Reference string `json:"reference,omitempty"`
}

// MarshalJSON writes {"has_value", "masked"}, or {"has_value",
// "reference"} for a reference.
func (v SecretView) MarshalJSON() ([]byte, error) {
	if v.Reference != "" {
		return encodeJSON(struct {
			HasValue  bool   `json:"has_value"`
			Reference string `json:"reference"`
		}{v.HasValue, v.Reference})
	}
	type plain SecretView // without this method
	return encodeJSON(plain(v))
}

// AuthView is the response form of [Auth]: the kind and the non-secret
// fields, with each secret reduced to a flag and a mask.
//
// TokenEndpointAuthMethod and SigningAlgorithm are as configured, "" for
// the default, so that a client that sends a view back does not pin a
// default that a later change of credential would have changed.
type AuthView struct {
	Kind           string `json:"kind"`
	HasToken       bool   `json:"has_token"`
	TokenMasked    string `json:"token_masked,omitempty"`
	TokenReference string `json:"token_reference,omitempty"`
	ClientID       string `json:"client_id,omitempty"`
	// The *Reference fields are as [SecretView.Reference]: the value
	// itself when it is made only of references, and then no mask.
	HasClientSecret       bool   `json:"has_client_secret"`
	ClientSecretMasked    string `json:"client_secret_masked,omitempty"`
	ClientSecretReference string `json:"client_secret_reference,omitempty"`
	HasPrivateKey         bool   `json:"has_private_key"`
	// PrivateKeyMasked is "****" when a key is set: the end of a PEM is
	// its armour and padding, which would not help to recognise it.
	PrivateKeyMasked        string   `json:"private_key_masked,omitempty"`
	PrivateKeyReference     string   `json:"private_key_reference,omitempty"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method,omitempty"`
	SigningAlgorithm        string   `json:"signing_algorithm,omitempty"`
	ClientMetadataURL       string   `json:"client_metadata_url,omitempty"`
	Scopes                  []string `json:"scopes,omitempty"`
}

// ServerView is the response form of [Server], the only form in which a
// server leaves mcpvisor: API answers, logs, status and debug dumps.
// Env and Headers are never nil, so clients can list the names set.
type ServerView struct {
	Name    string                `json:"name"`
	Type    string                `json:"type"`
	Command []string              `json:"command,omitempty"`
	Cwd     string                `json:"cwd,omitempty"`
	Env     map[string]SecretView `json:"env"`
	// URL has its userinfo, if any, replaced by "[redacted]", and each
	// query value and the fragment masked as a secret is (a value made
	// only of references shown as it is); the parameter names, scheme,
	// host, port and path are as written.
	URL     string                `json:"url,omitempty"`
	Headers map[string]SecretView `json:"headers"`
	Auth    AuthView              `json:"auth"`
	Enabled bool                  `json:"enabled"`
	// TimeoutSeconds is the effective timeout, defaults applied.
	TimeoutSeconds int `json:"timeout_seconds"`
	// MaxConcurrentCalls is as configured: 0 is unlimited.
	MaxConcurrentCalls int `json:"max_concurrent_calls"`
	// ConnectTimeoutSeconds, MaxCallSeconds, MaxOutputBytes and
	// MaxMediaBytes are effective, defaults applied; the caps are -1 when
	// off.
	ConnectTimeoutSeconds int `json:"connect_timeout_seconds"`
	MaxCallSeconds        int `json:"max_call_seconds"`
	MaxOutputBytes        int `json:"max_output_bytes"`
	MaxMediaBytes         int `json:"max_media_bytes"`
	// ProtocolVersion is the configured pin, "" for none.
	ProtocolVersion string `json:"protocol_version,omitempty"`
	// Tools is the configured tool filter.
	Tools ToolFilterView `json:"tools"`
}

// Mask returns a display form of secret that reveals at most its last 4
// characters, and those only when it has at least 12: "****abcd". A shorter
// secret is "****", an empty one "".
func Mask(secret string) string {
	if secret == "" {
		return ""
	}
	r := []rune(secret)
	if len(r) < 12 {
		return "****"
	}
	return "****" + string(r[len(r)-4:])
}

// viewSecret is the response form of v; refs: v may be a reference (not
// on an expanded Server, whose values are all final).
func viewSecret(v string, refs bool) SecretView {
	if refs && referenceOnly(v) {
		return SecretView{HasValue: true, Reference: v}
	}
	return SecretView{HasValue: v != "", Masked: Mask(v)}
}

func viewSecrets(m map[string]string, refs bool) map[string]SecretView {
	out := make(map[string]SecretView, len(m))
	for k, v := range m {
		out[k] = viewSecret(v, refs)
	}
	return out
}

// View returns the response form of s.
func (s Server) View() ServerView {
	text, media := s.OutputCaps()
	return ServerView{
		Name:               s.Name,
		Type:               s.Type,
		Command:            slices.Clone(s.Command),
		Cwd:                s.Cwd,
		Env:                viewSecrets(s.Env, !s.expanded),
		URL:                s.viewURL(),
		Headers:            viewSecrets(s.Headers, !s.expanded),
		Auth:               s.Auth.view(!s.expanded),
		Enabled:            s.Enabled,
		TimeoutSeconds:     int(s.Timeout().Seconds()),
		MaxConcurrentCalls: s.MaxConcurrentCalls,

		ConnectTimeoutSeconds: int(s.ConnectTimeout() / time.Second),
		MaxCallSeconds:        int(s.MaxCallDuration() / time.Second),
		MaxOutputBytes:        text,
		MaxMediaBytes:         media,
		ProtocolVersion:       s.ProtocolVersion,
		Tools:                 s.Tools.View(),
	}
}

// View returns the response form of a; a nil Auth is kind "none". A
// secret made only of references is shown as it is (see [SecretView]).
func (a *Auth) View() AuthView { return a.view(true) }

func (a *Auth) view(refs bool) AuthView {
	if a == nil {
		return AuthView{Kind: AuthNone}
	}
	token, secret, key := viewSecret(a.Token, refs), viewSecret(a.ClientSecret, refs), viewSecret(a.PrivateKey, refs)
	v := AuthView{
		Kind:                    a.Kind,
		HasToken:                token.HasValue,
		TokenMasked:             token.Masked,
		TokenReference:          token.Reference,
		ClientID:                a.ClientID,
		HasClientSecret:         secret.HasValue,
		ClientSecretMasked:      secret.Masked,
		ClientSecretReference:   secret.Reference,
		HasPrivateKey:           key.HasValue,
		PrivateKeyReference:     key.Reference,
		TokenEndpointAuthMethod: a.TokenEndpointAuthMethod,
		SigningAlgorithm:        a.SigningAlg,
		ClientMetadataURL:       a.ClientMetadataURL,
		Scopes:                  slices.Clone(a.Scopes),
	}
	if v.HasPrivateKey && v.PrivateKeyReference == "" {
		v.PrivateKeyMasked = "****"
	}
	return v
}

// MarshalJSON encodes the response form, [ServerView], so that encoding a
// Server by accident (in a debug dump, say) cannot leak a secret. Only
// [Marshal] writes the storage form.
func (s Server) MarshalJSON() ([]byte, error) { return json.Marshal(s.View()) }

// String returns the response form as JSON, for %v and %s.
func (s Server) String() string { return viewString(s.View()) }

// GoString is like String; it keeps %#v from printing the raw fields.
func (s Server) GoString() string { return "config.Server" + s.String() }

// LogValue logs the response form.
func (s Server) LogValue() slog.Value { return slog.AnyValue(s.View()) }

// MarshalJSON encodes the response form, [AuthView]; see
// [Server.MarshalJSON].
func (a Auth) MarshalJSON() ([]byte, error) { return json.Marshal(a.View()) }

// String returns the response form as JSON, for %v and %s.
func (a Auth) String() string { return viewString(a.View()) }

// GoString is like String; it keeps %#v from printing the raw fields.
func (a Auth) GoString() string { return "config.Auth" + a.String() }

// LogValue logs the response form.
func (a Auth) LogValue() slog.Value { return slog.AnyValue(a.View()) }

func viewString(v any) string {
	b, err := encodeJSON(v)
	if err != nil {
		return "<unprintable>" // unreachable: views hold only strings, bools, ints
	}
	return string(b)
}
