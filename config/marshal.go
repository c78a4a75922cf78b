package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Marshal encodes f in the storage form: full secret values, servers in
// order, known fields in a fixed order followed by the unknown fields kept
// from the file, indented by two spaces, with a trailing newline.
//
// It refuses a File whose server names are invalid or repeated, because
// writing it would produce a file that no longer parses. Semantically
// invalid servers are written as they are: the file is the user's, and an
// entry they are still fixing must not vanish.
func Marshal(f *File) ([]byte, error) {
	if f == nil {
		return nil, errors.New("marshalling configuration: nil *File")
	}
	servers := make([]member, 0, len(f.Servers))
	seen := make(map[string]bool, len(f.Servers))
	for _, s := range f.Servers {
		if err := ValidateName(s.Name); err != nil {
			return nil, fmt.Errorf("marshalling configuration: %w", err)
		}
		if seen[s.Name] {
			return nil, fmt.Errorf("marshalling configuration: duplicate server name %s", quote(s.Name))
		}
		seen[s.Name] = true
		if s.expanded {
			// The file keeps references: an expanded copy is for a
			// connect only, and writing it would store their values.
			return nil, fmt.Errorf("marshalling server %s: its references were expanded for a connect; refusing to store their values", s.Name)
		}
		raw, err := marshalServer(s)
		if err != nil {
			return nil, fmt.Errorf("marshalling server %s: %w", s.Name, err)
		}
		servers = append(servers, member{key: s.Name, value: raw})
	}
	serversRaw, err := encodeObject(servers)
	if err != nil {
		return nil, fmt.Errorf("marshalling configuration: %w", err)
	}
	top := append([]member{{key: "servers", value: serversRaw}}, f.unknown...)
	compact, err := encodeObject(top)
	if err != nil {
		return nil, fmt.Errorf("marshalling configuration: %w", err)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, compact, "", "  "); err != nil {
		return nil, fmt.Errorf("indenting configuration: %w", err)
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

func marshalServer(s Server) (json.RawMessage, error) {
	var ms []member
	add := func(key string, v any) error {
		raw, err := encodeJSON(v)
		if err == nil {
			ms = append(ms, member{key: key, value: raw})
		}
		return err
	}
	var errs []error
	if s.Type != "" {
		errs = append(errs, add("type", s.Type))
	}
	if len(s.Command) > 0 {
		errs = append(errs, add("command", s.Command))
	}
	if s.Cwd != "" {
		errs = append(errs, add("cwd", s.Cwd))
	}
	if len(s.Env) > 0 {
		errs = append(errs, add("env", s.Env))
	}
	if s.URL != "" {
		errs = append(errs, add("url", s.URL))
	}
	if len(s.Headers) > 0 {
		errs = append(errs, add("headers", s.Headers))
	}
	if s.Auth != nil {
		raw, err := marshalAuth(*s.Auth)
		errs = append(errs, err)
		ms = append(ms, member{key: "auth", value: raw})
	}
	// Always written, so that a reader of the file need not know the
	// default.
	errs = append(errs, add("enabled", s.Enabled))
	if s.TimeoutSeconds != 0 || s.timeoutZero {
		errs = append(errs, add("timeout_seconds", s.TimeoutSeconds))
	}
	if s.MaxConcurrentCalls != 0 {
		errs = append(errs, add("max_concurrent_calls", s.MaxConcurrentCalls))
	}
	for _, f := range []struct {
		key string
		n   int
	}{
		{"connect_timeout_seconds", s.ConnectTimeoutSeconds}, {"max_call_seconds", s.MaxCallSeconds},
		{"max_output_bytes", s.MaxOutputBytes}, {"max_media_bytes", s.MaxMediaBytes},
	} {
		if f.n != 0 || s.zeros&zeroBit(f.key) != 0 {
			errs = append(errs, add(f.key, f.n))
		}
	}
	if s.ProtocolVersion != "" {
		errs = append(errs, add("protocol_version", s.ProtocolVersion))
	}
	if !s.Tools.IsZero() {
		raw, err := marshalToolFilter(s.Tools)
		errs = append(errs, err)
		ms = append(ms, member{key: "tools", value: raw})
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return encodeObject(append(ms, s.unknown...))
}

func marshalAuth(a Auth) (json.RawMessage, error) {
	var ms []member
	var errs []error
	add := func(key string, v any) {
		raw, err := encodeJSON(v)
		errs = append(errs, err)
		ms = append(ms, member{key: key, value: raw})
	}
	if a.Kind != "" {
		add("kind", a.Kind)
	}
	for _, f := range authFields {
		if f.isSet(&a) {
			add(f.name, f.value(&a))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return encodeObject(append(ms, a.unknown...))
}

// encodeObject writes members as one compact JSON object, in order.
func encodeObject(ms []member) (json.RawMessage, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(',')
		}
		key, err := encodeJSON(m.key)
		if err != nil {
			return nil, err
		}
		b.Write(key)
		b.WriteByte(':')
		if err := json.Compact(&b, m.value); err != nil {
			return nil, fmt.Errorf("field %s: %w", quote(m.key), err)
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// encodeJSON is json.Marshal without HTML escaping, which would only make
// the file harder to read ("&" becoming "\u0026" in a URL).
func encodeJSON(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
