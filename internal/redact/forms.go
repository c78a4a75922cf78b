package redact

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"strings"
)

// minCore is the shortest aligned base64 core kept (see cores): shorter
// runs of base64 would mask random text in long base64 strings by chance.
const minCore = 16

// encodedForms is the most forms encoded adds for one unit: 1 raw, 2 JSON,
// 2 percent-encoded, 4 base64, 6 cores.
const encodedForms = 15

// forms returns every form of secret v that is scrubbed, each at least
// MinLen bytes: v itself; each line of a multi-line v (PEM armour lines
// excepted), as it is and without surrounding blanks; and for v and each
// line, its encoded forms (see encoded). Of a learned v, only the first
// maxLearnedLines lines are kept, without their encoded forms: a server
// must not make one Learn derive thousands of forms.
func forms(v string, learned bool) []string {
	units := []string{v}
	var lines []string
	if strings.ContainsAny(v, "\r\n") {
		for line := range strings.Lines(v) {
			if learned && len(lines) >= 2*maxLearnedLines {
				break
			}
			line = strings.TrimRight(line, "\r\n")
			if isArmour(line) {
				continue
			}
			t := strings.TrimSpace(line)
			if t == line || len(t) < MinLen {
				t = ""
			}
			lines = append(lines, t, line)
		}
	}
	if !learned {
		units, lines = append(units, lines...), nil
	}
	var out []string
	for _, l := range lines {
		if len(l) >= MinLen {
			out = append(out, l)
		}
	}
	for _, u := range units {
		out = append(out, encoded(u)...)
	}
	return out
}

// encoded returns unit u, if at least MinLen bytes, and its JSON-escaped
// form (with and without HTML escaping), its percent-encoded forms (query
// and path escaping), its base64 forms (standard and URL-safe, padded and
// raw), and its aligned base64 cores within a longer base64 string; each
// form at least MinLen bytes.
func encoded(u string) []string {
	if len(u) < MinLen {
		return nil
	}
	var out []string
	add := func(f string) {
		if len(f) >= MinLen {
			out = append(out, f)
		}
	}
	add(u)
	add(jsonEscaped(u, true))
	add(jsonEscaped(u, false))
	add(url.QueryEscape(u))
	add(url.PathEscape(u))
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		add(enc.EncodeToString([]byte(u)))
	}
	for _, c := range cores(u) {
		add(c)
	}
	return out
}

// isArmour reports whether line is a PEM armour line ("-----BEGIN PRIVATE
// KEY-----"): it says what a value is, not what it holds, and masking it
// would hide that a key was printed at all.
func isArmour(line string) bool {
	return strings.HasPrefix(line, "-----") && strings.HasSuffix(line, "-----")
}

// jsonEscaped is u as it appears inside a JSON string, without the quotes.
func jsonEscaped(u string, html bool) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(html)
	if enc.Encode(u) != nil {
		return ""
	}
	s := strings.TrimSuffix(b.String(), "\n")
	return s[1 : len(s)-1]
}

// cores returns, for each of the three byte offsets u may have inside a
// longer encoded stream, the base64 of the whole 3-byte groups of u at that
// offset: those characters are the same whatever surrounds u (a secret in
// the middle of a base64-encoded JSON document, say). Cores shorter than
// minCore are dropped. The characters at either end that depend on the
// neighbouring bytes stay visible; they reveal at most 2 bytes each.
func cores(u string) []string {
	var out []string
	for skip := range 3 {
		if skip >= len(u) {
			break
		}
		body := u[skip:]
		body = body[:len(body)/3*3]
		if c := base64.RawStdEncoding.EncodeToString([]byte(body)); len(c) >= minCore {
			out = append(out, c)
			if uc := base64.RawURLEncoding.EncodeToString([]byte(body)); uc != c {
				out = append(out, uc)
			}
		}
	}
	return out
}
