// Package redact removes secrets from text that leaves a connection: stderr
// lines, errors, server log notifications, progress messages and OAuth
// errors. One [Scrubber] belongs to one server connection; it starts with
// the configured secrets and learns the ones obtained while the connection
// lives (OAuth tokens, client assertions).
package redact

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// Marker replaces every secret found.
const Marker = "[redacted]"

// MinLen is the shortest value that is scrubbed. Values such as "1" or
// "true" are not secrets in practice, and masking every "1" in a log line
// would make it unreadable. It applies to each value, each line of a
// multi-line value and each encoded form alike.
const MinLen = 6

// Bounds on what a Scrubber learns, so that an authorization server that
// issues a new token on every request, or huge ones, cannot make it hold
// unbounded memory or spend unbounded time on each Learn: the newest
// maxLearned values, at most maxLearnedBytes of them, are kept (the oldest
// are forgotten first; configured secrets, given to New, are never
// forgotten). A value longer than maxFormsLen is scrubbed as it is only,
// not in its encoded forms (real tokens and client assertions are a few
// KiB). Of a learned multi-line value (obtained tokens are single-line;
// this is a server's doing) the first maxLearnedLines lines are scrubbed
// too, as they are only. So a learned value has at most
// maxFormsPerLearned forms, and a Scrubber at most maxLearned times that
// besides its configured secrets' forms.
const (
	maxLearned         = 64
	maxLearnedBytes    = 1 << 20
	maxFormsLen        = 16 << 10
	maxLearnedLines    = 16
	maxFormsPerLearned = encodedForms + 2*maxLearnedLines
)

// Scrubber masks every known secret, in each of the forms listed in
// [forms]. It is safe for concurrent use. Scrubbing is one lock-free load
// and one strings.Replacer pass; learning a new secret rebuilds the
// replacer, which happens a few times in a connection's life.
//
// A nil *Scrubber scrubs nothing.
type Scrubber struct {
	mu      sync.Mutex // serialises Learn
	fixed   []secret   // the configured secrets, given to New
	learned []secret   // obtained secrets, oldest first (see maxLearned)
	cur     atomic.Pointer[snapshot]
}

// secret is a known value and its forms, derived once.
type secret struct {
	v     string
	forms []string
}

func newSecret(v string, learned bool) secret {
	if len(v) > maxFormsLen {
		return secret{v: v, forms: []string{v}}
	}
	return secret{v: v, forms: forms(v, learned)}
}

func index(list []secret, v string) int {
	return slices.IndexFunc(list, func(s secret) bool { return s.v == v })
}

// snapshot is an immutable set of forms and its replacer.
type snapshot struct {
	rep     *strings.Replacer
	forms   []string // longest first
	longest int
	// probe: rep is strings' generic replacer, whose Replace copies text
	// even when nothing matches (the others return text itself then).
	probe bool
}

// New returns a Scrubber that knows secrets for its whole life.
func New(secrets ...string) *Scrubber {
	s := &Scrubber{}
	for _, v := range secrets {
		if v != "" && index(s.fixed, v) < 0 {
			s.fixed = append(s.fixed, newSecret(v, false))
		}
	}
	s.rebuild()
	return s
}

// Learn adds secrets obtained while the connection lives (tokens,
// assertions, registered client secrets). A value already known changes
// nothing, but counts as new again for the bound on learned values.
func (s *Scrubber) Learn(secrets ...string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	added := false
	for _, v := range secrets {
		if len(v) < MinLen && !strings.Contains(v, "\n") || index(s.fixed, v) >= 0 {
			continue
		}
		if i := index(s.learned, v); i >= 0 {
			known := s.learned[i]
			s.learned = append(slices.Delete(s.learned, i, i+1), known)
			continue
		}
		s.learned = append(s.learned, newSecret(v, true))
		added = true
	}
	if !added {
		return
	}
	size := 0
	for _, l := range s.learned {
		size += len(l.v)
	}
	for len(s.learned) > 1 && (len(s.learned) > maxLearned || size > maxLearnedBytes) {
		size -= len(s.learned[0].v)
		s.learned = s.learned[1:]
	}
	s.rebuild()
}

// rebuild makes the snapshot of every known secret; s.mu is held (or s is
// not shared yet).
func (s *Scrubber) rebuild() {
	set := map[string]bool{}
	for _, v := range slices.Concat(s.fixed, s.learned) {
		for _, f := range v.forms {
			set[f] = true
		}
	}
	list := make([]string, 0, len(set))
	for f := range set {
		list = append(list, f)
	}
	// Longest first, so that a secret containing another is masked whole
	// (strings.Replacer tries its pairs in order at each position).
	slices.SortFunc(list, func(a, b string) int {
		if d := len(b) - len(a); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	pairs := make([]string, 0, 2*len(list))
	for _, f := range list {
		pairs = append(pairs, f, Marker)
	}
	snap := &snapshot{rep: strings.NewReplacer(pairs...), forms: list, probe: generic(list)}
	if len(list) > 0 {
		snap.longest = len(list[0])
	}
	s.cur.Store(snap)
}

func (s *Scrubber) load() *snapshot {
	if s == nil {
		return nil
	}
	return s.cur.Load()
}

// String returns text with every known secret replaced by Marker.
func (s *Scrubber) String(text string) string {
	snap := s.load()
	if snap == nil || !snap.in(text) {
		return text
	}
	return snap.rep.Replace(text)
}

// in says whether rep would change text. strings' generic Replacer (the
// one of several forms) copies text even when nothing matches, and nearly
// every text has no secret: what a connection keeps (tool descriptions and
// schemas, tail lines) would all be second copies (P2: ~3 KiB per server).
// So the Replacer's own scan runs first, into a writer that stops it at
// its first write: one pass, whatever the number of forms (a check per
// form cost ~30 times the replace with 64 learned tokens, under the
// stderr writer's lock).
func (snap *snapshot) in(text string) bool {
	if !snap.probe {
		return true // Replace itself returns text unchanged
	}
	// With no match, the generic scan writes text whole, once (or nothing
	// if text is empty); with one, it first writes what precedes the
	// match, shorter than text.
	n, _ := snap.rep.WriteString(stopWriter{}, text)
	return n != len(text)
}

// generic says whether strings.NewReplacer builds its generic replacer
// for these forms (each replaced by Marker): not one form of two bytes or
// more, nor forms all of one byte (strings.Replacer's own rule).
func generic(forms []string) bool {
	if len(forms) == 1 && len(forms[0]) > 1 {
		return false
	}
	return slices.ContainsFunc(forms, func(f string) bool { return len(f) != 1 })
}

// errStop stops a Replacer's scan at its first write.
var errStop = errors.New("redact: scan stopped")

// stopWriter takes a Replacer's first write and stops its scan; of no
// size, it goes into an interface without allocating.
type stopWriter struct{}

func (stopWriter) Write(p []byte) (int, error)       { return len(p), errStop }
func (stopWriter) WriteString(s string) (int, error) { return len(s), errStop }

// Longest is the length of the longest form scrubbed: a writer that cuts
// long lines collects this much past its cut, so that a secret crossing
// the cut is still seen whole.
func (s *Scrubber) Longest() int {
	if snap := s.load(); snap != nil {
		return snap.longest
	}
	return 0
}

// Cut shortens a text to at most n bytes, on a UTF-8 boundary, and drops
// a trailing beginning of any secret form whose rest fell past the cut, so
// that scrubbing the result (or having scrubbed it before) leaves no part
// of a secret.
func (s *Scrubber) Cut(text string, n int) string {
	if len(text) <= n {
		return text
	}
	text = runeCut(text[:n])
	snap := s.load()
	if snap == nil {
		return text
	}
	// Until no form's beginning ends the text: dropping one can bare
	// another (a secret that repeats itself, one starting inside another).
	for dropped := true; dropped; {
		dropped = false
		for _, f := range snap.forms {
			for k := min(len(f)-1, len(text)); k > 0; k-- {
				if strings.HasSuffix(text, f[:k]) {
					text, dropped = text[:len(text)-k], true
					break
				}
			}
		}
	}
	return text
}

// runeCut drops the start of a UTF-8 sequence that a cut split from its
// end.
func runeCut(text string) string {
	for range utf8.UTFMax - 1 {
		if r, size := utf8.DecodeLastRuneInString(text); r != utf8.RuneError || size != 1 {
			break
		}
		text = text[:len(text)-1]
	}
	return text
}
