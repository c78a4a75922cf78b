package config

import (
	"encoding/json"
)

// ApplyPatch applies the JSON object patch to base, as PATCH
// /api/mcp/servers/{name} does, and returns the validated result. base is
// not modified. Every error is a *FieldError naming the field.
//
// The rules (DESIGN C4):
//   - A field that is absent keeps its value.
//   - "type", "command", "cwd" ("" puts back mcpvisor's own), "url", "enabled", "timeout_seconds",
//     "protocol_version" ("" puts back the newest),
//     "max_concurrent_calls" (0 puts back unlimited) and the non-secret
//     auth fields ("auth.kind", "auth.client_id",
//     "auth.scopes", "auth.token_endpoint_auth_method",
//     "auth.signing_algorithm", "auth.client_metadata_url") replace; for
//     the last three "" puts back the default.
//   - "connect_timeout_seconds", "max_call_seconds", "max_output_bytes"
//     and "max_media_bytes" replace, and 0 puts back the default (which
//     then follows timeout_seconds again where it derives from it), as
//     leaving the field out of the file does; in the file and in a
//     create request an explicit 0 is an error.
//   - "tools": "allow" and "deny" each replace when present ([] lifts the
//     list) and are kept when absent.
//   - "env" and "headers" merge: a key with a non-empty value is set, a key
//     with "" is deleted, a key not mentioned is kept.
//   - "auth.token", "auth.client_secret" and "auth.private_key": a value
//     replaces, "" deletes.
//   - Changing "auth.kind" drops every auth field the new kind does not
//     use: to "none" all of them, to "bearer" all but the token, between
//     "oauth" and "client_credentials" all but the client id, secret and
//     scopes they share. Fields sent in the same patch are applied after
//     the drop.
//   - "name" may be sent only with the current name: renaming is not
//     supported.
//   - References ("${VAR}") are stored as sent, never expanded.
//   - null is rejected rather than guessed to mean "keep" or "delete",
//     and so are unknown fields.
func ApplyPatch(base Server, patch []byte) (Server, error) {
	s, err := applyPatch(base, patch)
	if err != nil {
		return Server{}, err.inServer(base.Name)
	}
	if err := s.validateLimits(true); err != nil {
		return Server{}, err.inServer(s.Name)
	}
	if err := s.Validate(); err != nil {
		return Server{}, err
	}
	return s, nil
}

func applyPatch(base Server, patch []byte) (Server, *FieldError) {
	fields, err := readObject(patch)
	if err != nil {
		return Server{}, bodyError(err)
	}
	s := base.Clone()
	for _, m := range fields {
		if isNull(m.value) {
			return Server{}, nullErr(keyPath("", m.key))
		}
		var err *FieldError
		switch m.key {
		case "name":
			var name string
			name, err = decodeString(m.key, m.value)
			if err == nil && name != base.Name {
				err = fieldErr("name", "renaming is not supported")
			}
		case "type":
			s.Type, err = decodeString(m.key, m.value)
		case "command":
			s.Command, err = decodeStrings(m.key, m.value)
		case "cwd":
			s.Cwd, err = decodeString(m.key, m.value)
		case "env":
			s.Env, err = mergeSecrets(m.key, s.Env, m.value, exactKeys)
		case "url":
			s.URL, err = decodeString(m.key, m.value)
		case "headers":
			s.Headers, err = mergeSecrets(m.key, s.Headers, m.value, headerKeys)
		case "auth":
			s.Auth, err = patchAuth(s.Auth, m.value)
		case "enabled":
			s.Enabled, err = decodeBool(m.key, m.value)
		case "timeout_seconds":
			s.TimeoutSeconds, err = decodeInt(m.key, m.value)
			s.timeoutZero = s.TimeoutSeconds == 0
		case "max_concurrent_calls":
			s.MaxConcurrentCalls, err = decodeInt(m.key, m.value)
		case "connect_timeout_seconds", "max_call_seconds", "max_output_bytes", "max_media_bytes":
			var n int
			if n, err = decodeInt(m.key, m.value); err == nil {
				s.setInt(m.key, n)
				s.zeros &^= zeroBit(m.key) // 0: the default, not an error
			}
		case "protocol_version":
			s.ProtocolVersion, err = decodeString(m.key, m.value)
		case "tools":
			s.Tools, err = patchToolFilter(s.Tools, m.value)
		default:
			err = fieldErr(keyPath("", m.key), "unknown field")
		}
		if err != nil {
			return Server{}, err
		}
	}
	return s, nil
}

// patchAuth applies the auth rules to cur, which it owns.
func patchAuth(cur *Auth, raw json.RawMessage) (*Auth, *FieldError) {
	fields, err := readObject(raw)
	if err != nil {
		return nil, objectError("auth", err)
	}
	a := cur
	if a == nil {
		a = &Auth{Kind: AuthNone}
	}
	for _, m := range fields {
		if isNull(m.value) {
			return nil, nullErr(keyPath("auth", m.key))
		}
	}
	// The kind goes first whatever the member order, so that secrets sent
	// along with a new kind survive the drop.
	for _, m := range fields {
		if m.key != "kind" {
			continue
		}
		kind, err := decodeString("auth.kind", m.value)
		if err != nil {
			return nil, err
		}
		if kind != a.Kind {
			a.dropFor(kind)
			a.Kind = kind
		}
	}
	for _, m := range fields {
		path := keyPath("auth", m.key)
		var err *FieldError
		if m.key == "kind" {
			continue
		}
		if f, ok := authFieldNamed(m.key); ok {
			err = f.decode(a, path, m.value)
		} else {
			err = fieldErr(path, "unknown field")
		}
		if err != nil {
			return nil, err
		}
	}
	a.parseKey()
	return a, nil
}

// DecodeServer decodes the body of a create request, {"name": ...} plus the
// fields of an entry, and returns the validated Server. As in the file, a
// null field is absent and "enabled" defaults to true; unlike the file, an
// unknown field is an error, since a request has no older version to be
// compatible with. Every error is a *FieldError naming the field.
func DecodeServer(body []byte) (Server, error) {
	fields, err := readObject(body)
	if err != nil {
		return Server{}, bodyError(err)
	}
	s, ferr := decodeEntry(fields, true)
	if ferr != nil {
		return Server{}, ferr.inServer(nameOf(fields))
	}
	if err := s.Validate(); err != nil {
		return Server{}, err
	}
	return s, nil
}

// nameOf returns the "name" member of a body, for the path of an error
// found before the Server was complete.
func nameOf(fields []member) string {
	for _, m := range fields {
		if m.key == "name" {
			name, _ := decodeString("name", m.value)
			return name
		}
	}
	return ""
}

func nullErr(field string) *FieldError {
	return fieldErr(field, `must not be null: leave the field out to keep it, or send "" to delete a secret`)
}

// bodyError turns a document error into a *FieldError for the body as a
// whole, so that API callers get one error type for every bad request.
func bodyError(err error) *FieldError {
	derr := documentError(err)
	if fe, ok := derr.(*FieldError); ok {
		return fe
	}
	return fieldErr("", derr.Error())
}
