package config

import (
	"encoding/json"
	"slices"
	"strings"
)

// Auth kinds: how a remote server authenticates mcpvisor.
const (
	AuthNone   = "none"   // no credentials
	AuthBearer = "bearer" // a static token sent as "Authorization: Bearer"
	AuthOAuth  = "oauth"  // OAuth 2.1 authorization code + PKCE: a user signs in
	// AuthClientCredentials is the OAuth client credentials grant
	// (RFC 6749 section 4.4): machine to machine, no user involved.
	AuthClientCredentials = "client_credentials"
)

// Token endpoint authentication methods of kind client_credentials: how the
// client proves its identity when it asks for a token.
const (
	AuthMethodClientSecretBasic = "client_secret_basic" // HTTP Basic with the client secret (RFC 6749 section 2.3.1)
	AuthMethodClientSecretPost  = "client_secret_post"  // the client secret in the form body
	AuthMethodPrivateKeyJWT     = "private_key_jwt"     // a JWT signed with the private key (RFC 7523)
)

// Signing algorithms (RFC 7518) of the client assertion of
// AuthMethodPrivateKeyJWT.
const (
	AlgES256 = "ES256" // ECDSA on P-256 with SHA-256
	AlgES384 = "ES384" // ECDSA on P-384 with SHA-384
	AlgRS256 = "RS256" // RSASSA-PKCS1-v1_5 with SHA-256
	AlgPS256 = "PS256" // RSASSA-PSS with SHA-256
)

// Auth is the "auth" object of a remote server.
//
// Each kind uses its own fields:
//   - none: no field.
//   - bearer: Token, required.
//   - oauth: ClientID, ClientSecret, Scopes and ClientMetadataURL, all
//     optional. Without a client id the client identifies itself by its
//     metadata document (ClientMetadataURL) or registers dynamically.
//     ClientSecret requires ClientID.
//   - client_credentials: ClientID (required), Scopes, and exactly one
//     credential, ClientSecret or PrivateKey. TokenEndpointAuthMethod says
//     how the credential is presented and SigningAlg how a PrivateKey signs;
//     both have defaults that fit the credential.
//
// oauth and client_credentials need a Streamable HTTP server (type "http").
// Validate rejects fields that the kind does not use, and [ApplyPatch] drops
// them when the kind changes.
//
// Formatting an Auth with fmt or encoding/json yields the masked [AuthView];
// the storage form is written only by [Marshal].
type Auth struct {
	Kind         string `json:"kind"`
	Token        string `json:"token,omitempty"`         // secret
	ClientID     string `json:"client_id,omitempty"`     // not secret
	ClientSecret string `json:"client_secret,omitempty"` // secret
	// PrivateKey is the PEM of an unencrypted PKCS #8 private key
	// ("BEGIN PRIVATE KEY"): EC P-256 or P-384, or RSA of at least 2048
	// bits. Secret.
	PrivateKey string `json:"private_key,omitempty"`
	// TokenEndpointAuthMethod is one of the AuthMethod constants; empty
	// means the default, see [Auth.TokenAuthMethod].
	TokenEndpointAuthMethod string `json:"token_endpoint_auth_method,omitempty"`
	// SigningAlg is one of the Alg constants and must fit PrivateKey; empty
	// means the default, see [Auth.SigningAlgorithm].
	SigningAlg string `json:"signing_algorithm,omitempty"`
	// ClientMetadataURL is the URL of the client's Client ID Metadata
	// Document (MCP SEP-991), which then serves as its client id: https,
	// with a path below the root, and without userinfo or fragment.
	ClientMetadataURL string   `json:"client_metadata_url,omitempty"`
	Scopes            []string `json:"scopes,omitempty"`

	unknown []member   // fields this version does not know, kept for round trips
	key     *parsedKey // PrivateKey parsed once (see Signer); never serialized
}

// TokenAuthMethod returns the effective token endpoint authentication
// method of kind client_credentials: TokenEndpointAuthMethod if set,
// otherwise AuthMethodPrivateKeyJWT with a PrivateKey and
// AuthMethodClientSecretBasic without. It is "" for the other kinds, which
// do not configure one.
func (a Auth) TokenAuthMethod() string {
	switch {
	case a.Kind != AuthClientCredentials:
		return ""
	case a.TokenEndpointAuthMethod != "":
		return a.TokenEndpointAuthMethod
	case a.PrivateKey != "":
		return AuthMethodPrivateKeyJWT
	}
	return AuthMethodClientSecretBasic
}

// SigningAlgorithm returns the effective signing algorithm of PrivateKey:
// SigningAlg if set, otherwise the one its key type implies (AlgES256 for
// P-256, AlgES384 for P-384, AlgRS256 for RSA). It is "" without a
// PrivateKey, or when the key does not parse.
func (a Auth) SigningAlgorithm() string {
	switch {
	case a.PrivateKey == "":
		return ""
	case a.SigningAlg != "":
		return a.SigningAlg
	}
	k, err := a.keyInfo()
	if err != nil {
		return ""
	}
	return k.algs[0]
}

var (
	oauthKinds = []string{AuthOAuth, AuthClientCredentials}
	ccKind     = []string{AuthClientCredentials}
)

// authField describes one field of Auth besides Kind, so that decoding,
// patching, writing, comparing and the per-kind rules cannot forget one.
// Exactly one of str and strs is set.
type authField struct {
	name  string                // the JSON name inside "auth"
	kinds []string              // the kinds that use it
	str   func(*Auth) *string   // a string field
	strs  func(*Auth) *[]string // a list field
}

// authFields is in storage order.
var authFields = []authField{
	{name: "token", kinds: []string{AuthBearer}, str: func(a *Auth) *string { return &a.Token }},
	{name: "client_id", kinds: oauthKinds, str: func(a *Auth) *string { return &a.ClientID }},
	{name: "client_secret", kinds: oauthKinds, str: func(a *Auth) *string { return &a.ClientSecret }},
	{name: "private_key", kinds: ccKind, str: func(a *Auth) *string { return &a.PrivateKey }},
	{name: "token_endpoint_auth_method", kinds: ccKind, str: func(a *Auth) *string { return &a.TokenEndpointAuthMethod }},
	{name: "signing_algorithm", kinds: ccKind, str: func(a *Auth) *string { return &a.SigningAlg }},
	{name: "client_metadata_url", kinds: []string{AuthOAuth}, str: func(a *Auth) *string { return &a.ClientMetadataURL }},
	{name: "scopes", kinds: oauthKinds, strs: func(a *Auth) *[]string { return &a.Scopes }},
}

func authFieldNamed(name string) (authField, bool) {
	for _, f := range authFields {
		if f.name == name {
			return f, true
		}
	}
	return authField{}, false
}

func (f authField) isSet(a *Auth) bool {
	if f.str != nil {
		return *f.str(a) != ""
	}
	return len(*f.strs(a)) > 0
}

func (f authField) clear(a *Auth) {
	if f.str != nil {
		*f.str(a) = ""
	} else {
		*f.strs(a) = nil
	}
}

func (f authField) equal(a, b *Auth) bool {
	if f.str != nil {
		return *f.str(a) == *f.str(b)
	}
	return slices.Equal(*f.strs(a), *f.strs(b))
}

// decode sets the field of a from raw; path names it in an error.
func (f authField) decode(a *Auth, path string, raw json.RawMessage) *FieldError {
	var err *FieldError
	if f.str != nil {
		*f.str(a), err = decodeString(path, raw)
	} else {
		*f.strs(a), err = decodeStrings(path, raw)
	}
	return err
}

// value is what Marshal writes.
func (f authField) value(a *Auth) any {
	if f.str != nil {
		return *f.str(a)
	}
	return *f.strs(a)
}

func (a Auth) clone() Auth {
	c := a
	c.Scopes = slices.Clone(a.Scopes)
	c.unknown = cloneMembers(a.unknown)
	return c
}

func authOrNone(a *Auth) Auth {
	if a == nil {
		return Auth{Kind: AuthNone}
	}
	return *a
}

func (a Auth) equal(o Auth) bool {
	if a.Kind != o.Kind {
		return false
	}
	for _, f := range authFields {
		if !f.equal(&a, &o) {
			return false
		}
	}
	return true
}

func knownKind(kind string) bool {
	switch kind {
	case AuthNone, AuthBearer, AuthOAuth, AuthClientCredentials:
		return true
	}
	return false
}

// dropFor clears every field that kind does not use. For a kind Validate
// will reject anyway, nothing is dropped: the user can still fix the kind
// without losing anything.
func (a *Auth) dropFor(kind string) {
	if !knownKind(kind) {
		return
	}
	for _, f := range authFields {
		if !slices.Contains(f.kinds, kind) {
			f.clear(a)
		}
	}
}

// pemSecretLines returns the lines of a PEM body long enough to be worth
// redacting on their own: a key is often printed or logged one line at a
// time, and a redactor working on lines never sees the whole PEM.
func pemSecretLines(s string) []string {
	var out []string
	for line := range strings.Lines(s) {
		line = strings.TrimSpace(line)
		// Armour ("-----BEGIN ...") and headers ("Proc-Type: ...") are
		// not key material; base64 has neither '-' runs nor ':'.
		if len(line) > 16 && !strings.HasPrefix(line, "-----") && !strings.Contains(line, ":") {
			out = append(out, line)
		}
	}
	return out
}
