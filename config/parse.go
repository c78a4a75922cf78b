package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Parse decodes the storage form of the configuration file.
//
// It fails only on structural problems: data that is not a JSON object, a
// known field of the wrong JSON type, an invalid or duplicate server name,
// a duplicate field. An entry with semantic problems (unknown type, missing
// command...) loads; [Server.Validate] reports it. Empty data, or data that
// is only whitespace, is an empty configuration; a missing or null
// "servers" is no servers. A leading UTF-8 byte order mark is ignored.
//
// Within an entry a null field counts as absent, and "enabled" defaults to
// true. Unknown fields are kept and written back by [Marshal].
func Parse(data []byte) (*File, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if len(bytes.Trim(data, " \t\r\n")) == 0 {
		return &File{}, nil
	}
	top, err := readObject(data)
	if err != nil {
		return nil, documentError(err)
	}
	f := &File{}
	for _, m := range top {
		if m.key != "servers" {
			f.unknown = append(f.unknown, m)
			continue
		}
		if isNull(m.value) {
			continue
		}
		if f.Servers, err = parseServers(m.value); err != nil {
			return nil, err
		}
	}
	return f, nil
}

func parseServers(raw json.RawMessage) ([]Server, error) {
	entries, err := readObject(raw)
	if err != nil {
		var dup duplicateKeyError
		if errors.As(err, &dup) {
			return nil, fieldErr("servers", "duplicate server name "+quote(dup.key))
		}
		return nil, fieldErr("servers", "must be an object mapping server names to their configuration")
	}
	servers := make([]Server, 0, len(entries))
	for _, e := range entries {
		if !validName(e.key) {
			return nil, fieldErr("servers", invalidName(e.key))
		}
		fields, err := readObject(e.value)
		if err != nil {
			return nil, objectError("", err).inServer(e.key)
		}
		s, ferr := decodeEntry(fields, false)
		if ferr != nil {
			return nil, ferr.inServer(e.key)
		}
		s.Name = e.key
		servers = append(servers, s)
	}
	return servers, nil
}

// decodeEntry decodes the fields of a server entry. With strict, as for a
// request body, "name" is accepted and any other unknown field is an error;
// otherwise, as for the file, unknown fields (including "name") are kept.
// Null fields count as absent.
func decodeEntry(fields []member, strict bool) (Server, *FieldError) {
	s := Server{Enabled: true}
	for _, m := range fields {
		if isNull(m.value) {
			continue
		}
		var err *FieldError
		switch m.key {
		case "type":
			s.Type, err = decodeString(m.key, m.value)
		case "command":
			s.Command, err = decodeStrings(m.key, m.value)
		case "cwd":
			s.Cwd, err = decodeString(m.key, m.value)
		case "env":
			s.Env, err = decodeStringMap(m.key, m.value, exactKeys)
		case "url":
			s.URL, err = decodeString(m.key, m.value)
		case "headers":
			s.Headers, err = decodeStringMap(m.key, m.value, headerKeys)
		case "auth":
			s.Auth, err = decodeAuth(m.value, strict)
		case "enabled":
			s.Enabled, err = decodeBool(m.key, m.value)
		case "timeout_seconds":
			s.TimeoutSeconds, err = decodeInt(m.key, m.value)
			s.timeoutZero = err == nil && s.TimeoutSeconds == 0
		case "max_concurrent_calls":
			s.MaxConcurrentCalls, err = decodeInt(m.key, m.value)
		case "connect_timeout_seconds", "max_call_seconds", "max_output_bytes", "max_media_bytes":
			err = s.decodeLimit(m.key, m.value)
		case "protocol_version":
			s.ProtocolVersion, err = decodeString(m.key, m.value)
		case "tools":
			s.Tools, err = decodeToolFilter(m.value, strict)
		default:
			if strict {
				if m.key == "name" {
					s.Name, err = decodeString(m.key, m.value)
					break
				}
				return Server{}, fieldErr(keyPath("", m.key), "unknown field")
			}
			s.unknown = append(s.unknown, m)
		}
		if err != nil {
			return Server{}, err
		}
	}
	return s, nil
}

func decodeAuth(raw json.RawMessage, strict bool) (*Auth, *FieldError) {
	fields, err := readObject(raw)
	if err != nil {
		return nil, objectError("auth", err)
	}
	a := &Auth{}
	for _, m := range fields {
		if isNull(m.value) {
			continue
		}
		path := "auth." + m.key
		var ferr *FieldError
		f, known := authFieldNamed(m.key)
		switch {
		case m.key == "kind":
			a.Kind, ferr = decodeString(path, m.value)
		case known:
			ferr = f.decode(a, path, m.value)
		case strict:
			return nil, fieldErr(keyPath("auth", m.key), "unknown field")
		default:
			a.unknown = append(a.unknown, m)
		}
		if ferr != nil {
			return nil, ferr
		}
	}
	a.parseKey()
	return a, nil
}

// The decoders below never put the JSON value or the decoder's message in
// an error: the value may be a secret.

func decodeString(field string, raw json.RawMessage) (string, *FieldError) {
	var v string
	if json.Unmarshal(raw, &v) != nil {
		return "", fieldErr(field, "must be a string")
	}
	return v, nil
}

func decodeStrings(field string, raw json.RawMessage) ([]string, *FieldError) {
	var v []*string
	if json.Unmarshal(raw, &v) != nil || v == nil {
		return nil, fieldErr(field, "must be an array of strings")
	}
	out := make([]string, len(v))
	for i, p := range v {
		if p == nil {
			return nil, fieldErr(fmt.Sprintf("%s[%d]", field, i), "must be a string")
		}
		out[i] = *p
	}
	return out, nil
}

func decodeBool(field string, raw json.RawMessage) (bool, *FieldError) {
	var v bool
	if json.Unmarshal(raw, &v) != nil {
		return false, fieldErr(field, "must be true or false")
	}
	return v, nil
}

func decodeInt(field string, raw json.RawMessage) (int, *FieldError) {
	var v int
	if json.Unmarshal(raw, &v) != nil {
		return 0, fieldErr(field, "must be an integer")
	}
	return v, nil
}

func isNull(raw json.RawMessage) bool {
	return string(bytes.TrimSpace(raw)) == "null"
}

// errNotObject is returned by readObject for valid JSON that is not an
// object.
var errNotObject = errors.New("not a JSON object")

// duplicateKeyError is returned by readObject for an object that has the
// same key twice. encoding/json would silently keep the last one; for a
// configuration that is more likely a mistake than an intent.
type duplicateKeyError struct{ key string }

func (e duplicateKeyError) Error() string { return "duplicate field " + quote(e.key) }

// readObject splits the JSON object in data into its members, in order.
func readObject(data []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errNotObject
	}
	var ms []member
	seen := make(map[string]bool)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, ok := tok.(string)
		if !ok {
			return nil, errNotObject // unreachable: the decoder only yields string keys
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		if seen[key] {
			return nil, duplicateKeyError{key}
		}
		seen[key] = true
		ms = append(ms, member{key: key, value: raw})
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		if err == nil {
			err = errors.New("unexpected data after the top-level object")
		}
		return nil, err
	}
	return ms, nil
}

// objectError describes an error from readObject on a value that is
// already known to be valid JSON: it is not an object, or repeats a key.
func objectError(field string, err error) *FieldError {
	var dup duplicateKeyError
	if errors.As(err, &dup) {
		return fieldErr(keyPath(field, dup.key), "duplicate field")
	}
	return fieldErr(field, "must be a JSON object")
}

// documentError describes an error from readObject on a whole document (the
// file or a request body), which may not be JSON at all.
func documentError(err error) error {
	var dup duplicateKeyError
	var syn *json.SyntaxError
	switch {
	case errors.Is(err, errNotObject), errors.As(err, &dup):
		return objectError("", err)
	case errors.As(err, &syn):
		// The offset only: the decoder's message quotes the character it
		// stopped at, which may be the first of a secret.
		return fmt.Errorf("invalid JSON at byte %d", syn.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return errors.New("invalid JSON: unexpected end of input")
	default:
		return fmt.Errorf("invalid JSON: %w", err)
	}
}
