package config

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/openprogram/mcpvisor/internal/redact"
)

// A server's URL is not a secret as a whole: its scheme, host and port
// say where it connects and stay visible everywhere. Its other parts are
// where hosts put credentials (https://TOKEN@host/, ?api_key=…, as
// Smithery does), so these count as secrets: the userinfo (user and
// password), every query value and the fragment. The view masks them
// (keeping the query's parameter names), [Server.Secrets] returns them,
// and what a reference in the path expanded to is one too, and so are a
// default and a pasted-looking name of a reference outside the scheme,
// host and port. A bare query word of 12 characters or more counts as a
// value; a shorter one, and literal text in the path, are not secrets
// (shown and not scrubbed). The connection itself uses the URL as it is.

// urlTemplate is raw parsed with each reference replaced by a stand-in
// that url.Parse accepts where it sits; restore puts the references back
// into any text cut from it (a part, or the whole URL rebuilt).
type urlTemplate struct {
	u       *url.URL
	text    string       // the template: raw with its stand-ins
	holders []string     // the stand-in of each reference, in order
	refs    []string     // each reference as written
	parsed  []*reference // each reference parsed
	// bracket is the stand-in of an IPv6 literal's brackets that hold
	// references ("[${V6}]"), "" for none; bracketText is what they hold
	// as written. The address must parse, so it stands in whole.
	bracket, bracketText string
	inBracket            []bool // per reference: inside those brackets
}

// parseURLTemplate parses raw, whose references (if refs) are not yet
// expanded. ok is false when the template does not parse.
func parseURLTemplate(raw string, refs bool) (t urlTemplate, ok bool) {
	ps, err := parseRefs(raw)
	if !refs || err != nil || !hasRefs(raw) {
		u, err := url.Parse(raw)
		return urlTemplate{u: u, text: raw}, err == nil
	}
	var tmpl strings.Builder
	for _, p := range ps {
		if p.ref == nil {
			tmpl.WriteString(p.raw)
			continue
		}
		h := placeholder(raw, len(t.holders), inPort(tmpl.String()))
		tmpl.WriteString(h)
		t.holders = append(t.holders, h)
		t.refs = append(t.refs, p.raw)
		t.parsed = append(t.parsed, p.ref)
	}
	t.text = tmpl.String()
	for _, h := range t.holders {
		if strings.Count(t.text, h) != 1 {
			return urlTemplate{}, false // a stand-in the text around it makes ambiguous
		}
	}
	t.standInBracket(raw)
	u, perr := url.Parse(t.text)
	t.u = u
	return t, perr == nil
}

// standInBracket replaces the content of the authority's IPv6 brackets,
// when they hold a stand-in, by an address that is not in raw: Go's
// url.Parse checks that an IPv6 literal parses, and no stand-in inside
// one makes it parse wherever it sits ("[${V6}]", "[fe80::${ID}]").
func (t *urlTemplate) standInBracket(raw string) {
	_, rest, ok := strings.Cut(t.text, "//")
	if !ok {
		return
	}
	auth := rest[:authorityEnd(rest)]
	open := strings.LastIndex(auth, "[")
	closing := strings.LastIndex(auth, "]")
	if open < 0 || closing < open {
		return
	}
	inner := auth[open+1 : closing]
	t.inBracket = make([]bool, len(t.holders))
	found := false
	for i, h := range t.holders {
		t.inBracket[i] = strings.Contains(inner, h)
		found = found || t.inBracket[i]
	}
	if !found {
		return
	}
	for salt := 0; ; salt++ {
		t.bracket = fmt.Sprintf("fade::%x", salt)
		if !strings.Contains(raw, t.bracket) && !strings.Contains(t.text, t.bracket) {
			break
		}
	}
	t.bracketText = inner
	at := len(t.text) - len(rest) + open + 1
	t.text = t.text[:at] + t.bracket + t.text[at+len(inner):]
}

// authorityEnd is the length of the authority at the start of rest (the
// text after "//"): up to the first '/', '?' or '#'.
func authorityEnd(rest string) int {
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		return i
	}
	return len(rest)
}

// restore puts the references back into text cut from the template.
func (t urlTemplate) restore(text string) string {
	return t.restoreWith(text, func(i int) string { return t.refs[i] })
}

// restoreView puts the references back as the view shows them: as
// written when one holds no secret of its own or sits in the scheme, the
// host or the port; otherwise with its default and a pasted-looking name
// masked (viewRef).
func (t urlTemplate) restoreView(text string) string {
	origin := t.originRefs()
	return t.restoreWith(text, func(i int) string {
		if origin[i] || referenceOnly(t.refs[i]) {
			return t.refs[i]
		}
		return viewRef(t.refs[i], t.parsed[i])
	})
}

// restoreWith puts back into text the i-th reference as ref(i) gives it.
func (t urlTemplate) restoreWith(text string, ref func(i int) string) string {
	if t.bracket != "" {
		text = strings.Replace(text, t.bracket, t.bracketText, 1)
	}
	for i, h := range t.holders {
		text = strings.Replace(text, h, ref(i), 1)
	}
	return text
}

// viewRef is reference r, written raw, with its default masked and its
// name masked when it is not [EnvShaped] (it may be a pasted secret):
// "${SEG:-****}", "${****}".
func viewRef(raw string, r *reference) string {
	var b strings.Builder
	b.WriteString("${")
	if strings.HasPrefix(raw, "${env:") {
		b.WriteString("env:")
	}
	if EnvShaped(r.name) {
		b.WriteString(r.name)
	} else {
		b.WriteString("****")
	}
	if r.hasDefault {
		b.WriteString(":-")
		if r.def != "" {
			b.WriteString("****")
		}
	}
	b.WriteString("}")
	return b.String()
}

// inPort reports whether a reference that follows prefix is in a port or
// a password: after the last ':' of the authority (past any userinfo and
// IPv6 brackets), where only digits are sure to parse ("host:${PORT}",
// "host:80${X}", "u:${PASS}@").
func inPort(prefix string) bool {
	_, auth, ok := strings.Cut(prefix, "//")
	if !ok || strings.ContainsAny(auth, "/?#") {
		return false
	}
	if i := strings.LastIndex(auth, "@"); i >= 0 {
		auth = auth[i+1:]
	}
	return strings.LastIndex(auth, ":") > strings.LastIndex(auth, "]")
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

// originRefs reports, for each reference of the template, whether it
// sits in the scheme, the host or the port (not a secret), or is the
// start of a URL whose template has neither (${BASE_URL}/mcp: the
// reference is the origin). In the host, a reference right after another
// one ("https://${HOST}${P}") may bring the path, and is not the origin
// (unless in the port); what they expand to decides (expandedRefSecrets).
func (t urlTemplate) originRefs() []bool {
	out := make([]bool, len(t.holders))
	host := t.u.Host
	port := strings.LastIndex(host, ":")
	if port < 0 || port < strings.LastIndex(host, "]") {
		port = len(host)
	}
	for i, h := range t.holders {
		switch at := strings.Index(host, h); {
		case t.inBracket != nil && t.inBracket[i]:
			out[i] = true
		case t.u.Scheme == "" && t.u.Host == "":
			out[i] = i == 0 && strings.HasPrefix(t.text, h)
		case strings.Contains(t.u.Scheme, h):
			out[i] = true
		case at >= 0:
			out[i] = at > port || !t.afterHolder(host[:at])
		}
	}
	return out
}

// afterHolder reports whether text ends with a stand-in.
func (t urlTemplate) afterHolder(text string) bool {
	for _, h := range t.holders {
		if strings.HasSuffix(text, h) {
			return true
		}
	}
	return false
}

// urlRefSecrets reports, for each reference of raw in order, whether
// what it expands to is a secret: one anywhere but in the scheme, the
// host or the port (see originRefs). A URL whose template does not parse
// has only secret references.
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
	for i, origin := range t.originRefs() {
		out[i] = !origin
	}
	return out
}

// expandedRefSecrets reports, for each reference of raw in order, whether
// what it became (parts) is a secret in the expanded URL val: whether it
// lies anywhere but wholly within the scheme, "://" and the host and
// port, clear of the userinfo. The template alone cannot tell: in
// "https://${HOST}${P}" both stand-ins parse into the host. If val does
// not parse with a host, every reference is a secret.
func expandedRefSecrets(raw, val string, parts []string) []bool {
	ps, err := parseRefs(raw)
	if err != nil {
		return nil
	}
	out := make([]bool, 0, len(parts))
	u, perr := url.Parse(val)
	originOK := perr == nil && u.Scheme != "" && u.Host != "" && strings.HasPrefix(val[len(u.Scheme):], "://")
	var authStart, hostStart, authEnd int
	if originOK {
		authStart = len(u.Scheme) + len("://")
		authEnd = authStart + authorityEnd(val[authStart:])
		hostStart = authStart + strings.LastIndex(val[authStart:authEnd], "@") + 1
	}
	off := 0
	for _, p := range ps {
		if p.ref == nil {
			off += len(p.lit)
			continue
		}
		if len(out) == len(parts) {
			break
		}
		start, end := off, off+len(parts[len(out)])
		off = end
		inUserinfo := hostStart > authStart && start < hostStart && end > authStart
		out = append(out, !originOK || end > authEnd || inUserinfo)
	}
	return out
}

// urlSecrets returns the secret parts of raw (see the comment at the top
// of this file), as their text (references restored, if refs) and in
// the forms a connection sends them or Go's HTTP errors print them: the
// userinfo's user and password alone, the user escaped, the userinfo
// escaped (Post "URL" errors print it so, with the password stripped),
// the "user:pass" pair and its base64 (the Basic credential Go's HTTP
// client makes of the userinfo), each query value (and each bare query
// word of 12 characters or more) decoded and as written, and the
// fragment decoded, escaped and as written. Unexpanded (refs), the
// default and a pasted-looking name of a reference outside the scheme,
// host and port are secrets too.
func urlSecrets(raw string, refs bool) []string {
	t, ok := parseURLTemplate(raw, refs)
	if !ok {
		if refs {
			return refParts(raw, urlRefSecrets(raw))
		}
		return nil
	}
	u := t.u
	var out []string
	if u.User != nil {
		user := t.restore(u.User.Username())
		pass, _ := u.User.Password()
		pass = t.restore(pass)
		out = append(out, user, pass, t.restore(url.User(u.User.Username()).String()))
		if (user != "" || pass != "") && !(refs && (hasRefs(user) || hasRefs(pass))) {
			pair := user + ":" + pass
			out = append(out, pair, base64.StdEncoding.EncodeToString([]byte(pair)), u.User.String())
		}
	}
	for _, kv := range strings.Split(u.RawQuery, "&") {
		_, v, eq := strings.Cut(kv, "=")
		if !eq {
			if !longBareWord(t.restore(kv)) {
				continue
			}
			v = kv
		}
		v = t.restore(v)
		out = append(out, v)
		if dec, err := url.QueryUnescape(v); err == nil && dec != v {
			out = append(out, dec)
		}
	}
	out = append(out, t.restore(u.Fragment), t.restore(u.EscapedFragment()))
	if _, frag, ok := strings.Cut(t.text, "#"); ok {
		out = append(out, t.restore(frag))
	}
	if refs {
		out = append(out, refParts(raw, urlRefSecrets(raw))...)
	}
	return out
}

// longBareWord reports whether a query part without '=' is long enough
// (12 characters or more, decoded: the length at which [Mask] shows an
// end) to be a key given bare ("?sk-live-…") rather than a flag.
func longBareWord(w string) bool {
	if dec, err := url.QueryUnescape(w); err == nil {
		w = dec
	}
	return utf8.RuneCountInString(w) >= 12
}

// refParts returns the non-empty defaults and the names that are not
// [EnvShaped] of the references of raw that secret marks: either may be
// a secret written in the file.
func refParts(raw string, secret []bool) []string {
	ps, err := parseRefs(raw)
	if err != nil {
		return nil
	}
	var out []string
	i := 0
	for _, p := range ps {
		if p.ref == nil {
			continue
		}
		if i < len(secret) && secret[i] {
			out = append(out, p.ref.def)
			if !EnvShaped(p.ref.name) {
				out = append(out, p.ref.name)
			}
		}
		i++
	}
	return out
}

// viewURL is the URL as the view shows it: its userinfo replaced by
// "[redacted]" (see redact.URL), each query value, each bare query word
// of 12 characters or more and the fragment masked as a secret field is
// (Mask, or the value itself when it is made only of references), the
// parameter names, scheme, host, port and path as written, except that a
// reference outside the scheme, host and port shows its default and a
// name that is not [EnvShaped] masked (viewRef). On an expanded server, what a reference of the path
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
			switch {
			case eq:
				if m := maskQueryValue(t.restore(v), refs); m != t.restore(v) {
					kvs[i] = name + "=" + m
				}
			case longBareWord(t.restore(kv)):
				// A key given bare ("?sk-live-…"), not a flag.
				if m := maskQueryValue(t.restore(kv), refs); m != t.restore(kv) {
					kvs[i] = m
				}
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
		return s.scrubRefValues(t.restoreView(t.text))
	}
	out := u.String()
	if hadUser {
		// Put back by hand: url.User would escape the marker's brackets.
		out = strings.Replace(out, "//", "//"+redact.Marker+"@", 1)
	}
	return s.scrubRefValues(t.restoreView(out))
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
