package config

import "strings"

// Canonical returns a copy of s in which each spelling that means the
// same as another is written one way, for comparing configs by meaning
// (a catalog diff): a reference ${env:NAME} becomes ${NAME}; an auth of
// kind "none" with nothing else set is dropped (no auth); and
// timeout_seconds, connect_timeout_seconds, max_call_seconds,
// max_output_bytes and max_media_bytes are left out (0) where they equal
// what their absence gives. s must be valid: an explicit 0, an error, is
// not a default.
func (s Server) Canonical() Server {
	c := s.Clone()
	if c.Auth != nil && c.Auth.equal(Auth{Kind: AuthNone}) {
		c.Auth = nil
	}
	if !c.timeoutZero && c.TimeoutSeconds == DefaultTimeoutSeconds {
		c.TimeoutSeconds = 0
	}
	// Each after timeout_seconds: their defaults may follow it.
	d := c
	if d.ConnectTimeoutSeconds = 0; d.ConnectTimeout() == c.ConnectTimeout() {
		c.ConnectTimeoutSeconds = 0
	}
	d = c
	if d.MaxCallSeconds = 0; d.MaxCallDuration() == c.MaxCallDuration() {
		c.MaxCallSeconds = 0
	}
	text, media := c.OutputCaps()
	d = c
	d.MaxOutputBytes = 0
	if t, _ := d.OutputCaps(); t == text {
		c.MaxOutputBytes = 0
	}
	d = c
	d.MaxMediaBytes = 0
	if _, m := d.OutputCaps(); m == media {
		c.MaxMediaBytes = 0
	}
	c.refFields(func(_ string, _ bool, v *string) bool {
		*v = canonicalRefs(*v)
		return true
	})
	return c
}

// canonicalRefs is v with each ${env:NAME…} written ${NAME…}; a value
// without one, or malformed, is returned as it is.
func canonicalRefs(v string) string {
	if !strings.Contains(v, "${env:") {
		return v
	}
	ps, err := parseRefs(v)
	if err != nil {
		return v
	}
	var b strings.Builder
	for _, p := range ps {
		switch {
		case p.ref == nil:
			b.WriteString(p.raw)
		case p.ref.hasDefault:
			b.WriteString("${" + p.ref.name + ":-" + p.ref.def + "}")
		default:
			b.WriteString("${" + p.ref.name + "}")
		}
	}
	return b.String()
}
