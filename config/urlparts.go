package config

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"

	"github.com/openprogram/mcpvisor/internal/redact"
)

// A server's URL is not a secret as a whole: its scheme, host and port
// say where it connects and stay visible everywhere. Its other parts are
// where hosts put credentials (https://TOKEN@host/, ?api_key=…, as
// Smithery does), so these count as secrets: the userinfo (user and
// password), every query value and the fragment. The view masks them
// (keeping the query's parameter names), [Server.Secrets] returns them,
// and what a reference in the path expanded to is one too. The connection
// itself uses the URL as it is.

// urlTemplate is raw parsed with each reference replaced by a stand-in
// that url.Parse accepts where it sits; restore puts the references back
// into any text cut from it (a part, or the whole URL rebuilt).
type urlTemplate struct {
	u       *url.URL
	holders []string // the stand-in of each reference, in order
	refs    []string // each reference as written
}

// parseURLTemplate parses raw, whose references (if refs) are not yet
// expanded. ok is false when the template does not parse.
func parseURLTemplate(raw string, refs bool) (t urlTemplate, ok bool) {
	ps, err := parseRefs(raw)
	if !refs || err != nil || !hasRefs(raw) {
		u, err := url.Parse(raw)
		return urlTemplate{u: u}, err == nil
	}
	var tmpl strings.Builder
	for _, p := range ps {
		if p.ref == nil {
			tmpl.WriteString(p.raw)
			continue
		}
		h := placeholder(raw, len(t.holders), afterColonInAuthority(tmpl.String()))
		tmpl.WriteString(h)
		t.holders = append(t.holders, h)
		t.refs = append(t.refs, p.raw)
	}
	for _, h := range t.holders {
		if strings.Count(tmpl.String(), h) != 1 {
			return urlTemplate{}, false // a stand-in the text around it makes ambiguous
		}
	}
	u, perr := url.Parse(tmpl.String())
	t.u = u
	return t, perr == nil
}

// restore puts the references back into text cut from the template.
func (t urlTemplate) restore(text string) string {
	for i, h := range t.holders {
		text = strings.Replace(text, h, t.refs[i], 1)
	}
	return text
}

// afterColonInAuthority reports whether a reference that follows prefix
// is a port or a password: right after a ':' of the authority, where only
// digits are sure to parse.
func afterColonInAuthority(prefix string) bool {
	_, auth, ok := strings.Cut(prefix, "//")
	return ok && strings.HasSuffix(auth, ":") && !strings.ContainsAny(auth, "/?#")
}

// placeholder is the i-th stand-in for a reference of raw, not in raw:
// letters and digits that url.Parse keeps as they are in a host, a path,
// a query or a fragment, or digits only (port) for a port or a password.
// parseURLTemplate refuses a template in which one is ambiguous.
func placeholder(raw string, i int, port bool) string {
	for salt := 0; ; salt++ {
		p := fmt.Sprintf("mcpvisorref%dx%dx", salt, i)
		if port {
			p = fmt.Sprintf("9%d0%d9", salt, i)
		}
		if !strings.Contains(raw, p) {
			return p
		}
	}
}

// urlRefSecrets reports, for each reference of raw in order, whether
// what it expands to is a secret: one anywhere but in the scheme, the
// host or the port, or at the start of a URL whose template has neither
// (${BASE_URL}/mcp: the reference is the origin). A URL whose template
// does not parse has only secret references.
func urlRefSecrets(raw string) []bool {
	ps, err := parseRefs(raw)
	if err != nil {
		return nil
	}
	var out []bool
	for _, p := range ps {
		if p.ref != nil {
			out = append(out, true)
		}
	}
	t, ok := parseURLTemplate(raw, true)
	if !ok {
		return out
	}
	for i, h := range t.holders {
		switch {
		case t.u.Scheme == "" && t.u.Host == "":
			out[i] = i > 0 || !strings.HasPrefix(raw, t.refs[0])
		default:
			out[i] = !strings.Contains(t.u.Scheme, h) && !strings.Contains(t.u.Host, h)
		}
	}
	return out
}

// urlSecrets returns the secret parts of raw (see the comment at the top
// of this file), as their text (references restored, if refs) and in
// the forms a connection sends them: the userinfo's user and password
// alone, as the "user:pass" pair and as its base64 (the Basic credential
// Go's HTTP client makes of the userinfo), each query value decoded and
// as written, and the fragment.
func urlSecrets(raw string, refs bool) []string {
	t, ok := parseURLTemplate(raw, refs)
	if !ok {
		return nil
	}
	u := t.u
	var out []string
	if u.User != nil {
		user := t.restore(u.User.Username())
		pass, _ := u.User.Password()
		pass = t.restore(pass)
		out = append(out, user, pass)
		if (user != "" || pass != "") && !(refs && (hasRefs(user) || hasRefs(pass))) {
			pair := user + ":" + pass
			out = append(out, pair, base64.StdEncoding.EncodeToString([]byte(pair)))
		}
	}
	for _, kv := range strings.Split(u.RawQuery, "&") {
		_, v, _ := strings.Cut(kv, "=")
		v = t.restore(v)
		out = append(out, v)
		if dec, err := url.QueryUnescape(v); err == nil && dec != v {
			out = append(out, dec)
		}
	}
	out = append(out, t.restore(u.Fragment))
	return out
}

// viewURL is the URL as the view shows it: its userinfo replaced by
// "[redacted]" (see redact.URL), each query value and the fragment
// masked as a secret field is (Mask, or the value itself when it is made
// only of references), the parameter names, scheme, host, port and path
// as written. On an expanded server, what a reference of the path
// became is scrubbed too. A URL that does not parse, even with its
// references replaced by stand-ins that would, is redact.Unparsable.
func (s Server) viewURL() string {
	refs := !s.expanded
	t, ok := parseURLTemplate(s.URL, refs)
	if !ok {
		return redact.Unparsable
	}
	u := *t.u
	changed := false
	hadUser := u.User != nil && u.User.String() != ""
	if hadUser {
		u.User = nil
		changed = true
	}
	if u.RawQuery != "" {
		kvs := strings.Split(u.RawQuery, "&")
		for i, kv := range kvs {
			name, v, eq := strings.Cut(kv, "=")
			if m := maskQueryValue(t.restore(v), refs); eq && m != t.restore(v) {
				kvs[i] = name + "=" + m
			}
		}
		if q := strings.Join(kvs, "&"); q != u.RawQuery {
			u.RawQuery, changed = q, true
		}
	}
	if u.Fragment != "" {
		if frag := t.restore(u.Fragment); !(refs && referenceOnly(frag)) {
			u.Fragment, u.RawFragment, changed = Mask(frag), "", true
		}
	}
	if !changed {
		return s.scrubRefValues(s.URL)
	}
	out := u.String()
	if hadUser {
		// Put back by hand: url.User would escape the marker's brackets.
		out = strings.Replace(out, "//", "//"+redact.Marker+"@", 1)
	}
	return s.scrubRefValues(t.restore(out))
}

// maskQueryValue is the view of one query value as written: "" stays
// "", a value made only of references (refs) stays as it is, and any
// other is masked as [Mask] does, the revealed end query-escaped.
func maskQueryValue(v string, refs bool) string {
	if v == "" || refs && referenceOnly(v) {
		return v
	}
	dec, err := url.QueryUnescape(v)
	if err != nil {
		dec = v
	}
	return "****" + url.QueryEscape(strings.TrimPrefix(Mask(dec), "****"))
}

// scrubRefValues is text with what s's references became scrubbed out,
// on an expanded s (its path may hold one); text itself otherwise.
func (s Server) scrubRefValues(text string) string {
	if !s.expanded || len(s.refValues) == 0 {
		return text
	}
	return redact.New(s.refValues...).String(text)
}
