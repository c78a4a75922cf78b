package redact

import (
	"net/url"
	"strings"
)

// Unparsable stands for a URL that [URL] cannot parse: its text may hold
// anything, a password included, and nothing can say which part.
const Unparsable = "<unparsable URL>"

// URL returns raw as it may be shown in an error, a log line or an API
// answer: its userinfo, if any, replaced by Marker (the username too: a
// token is often passed as one, as in https://TOKEN@host/) and,
// unless keepQuery, its query and fragment dropped (a URL that came from
// a server, such as an authorization server's, may carry a code or a
// token there that no Scrubber knows yet). A URL with nothing to hide is
// returned exactly as given; one that does not parse is Unparsable.
//
// The configured form of a server's URL keeps its query (keepQuery): the
// user wrote it, and its secret parts are the configured headers and
// userinfo, not the query.
//
// (Marker is "[redacted]": https://user:pw@host/ becomes
// https://[redacted]@host/.)
func URL(raw string, keepQuery bool) string {
	u, err := url.Parse(raw)
	if err != nil {
		return Unparsable
	}
	changed := false
	var user string
	if u.User != nil && u.User.String() != "" {
		// Put back by hand: url.User would escape the marker's brackets.
		user = Marker + "@"
		u.User = nil
		changed = true
	}
	if !keepQuery && (u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || u.RawFragment != "") {
		u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = "", false, "", ""
		changed = true
	}
	if !changed {
		return raw
	}
	s := u.String()
	if user != "" {
		s = strings.Replace(s, "//", "//"+user, 1)
	}
	return s
}
