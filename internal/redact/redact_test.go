package redact

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

const planted = `MARK-s3cr3t/<v>&"q"+x=1`

func TestScrubsEveryForm(t *testing.T) {
	s := New(planted)
	js, _ := json.Marshal(planted)
	texts := map[string]string{
		"raw":           planted,
		"json":          string(js),
		"json no html":  `"MARK-s3cr3t/<v>&\"q\"+x=1"`,
		"query":         url.QueryEscape(planted),
		"path":          url.PathEscape(planted),
		"base64":        base64.StdEncoding.EncodeToString([]byte(planted)),
		"base64 raw":    base64.RawStdEncoding.EncodeToString([]byte(planted)),
		"base64url":     base64.URLEncoding.EncodeToString([]byte(planted)),
		"base64url raw": base64.RawURLEncoding.EncodeToString([]byte(planted)),
	}
	for off := range 3 {
		doc := strings.Repeat("z", off) + `{"header":"` + planted + `"}`
		texts[fmt.Sprintf("embedded base64 at offset %d", off)] = base64.StdEncoding.EncodeToString([]byte(doc))
	}
	for name, text := range texts {
		got := s.String("echo: " + text + " end")
		if !strings.Contains(got, Marker) {
			t.Errorf("%s: not scrubbed: %q", name, got)
		}
		if strings.Contains(got, text) {
			t.Errorf("%s: still holds the form: %q", name, got)
		}
	}
}

func TestMultiLineValueScrubbedLineByLine(t *testing.T) {
	s := New("first-LINE-aaaa\r\n  second-LINE-bbbb  \nok\n")
	got := s.String("a first-LINE-aaaa b second-LINE-bbbb c ok")
	if strings.Contains(got, "LINE") {
		t.Errorf("a line of a multi-line value leaked: %q", got)
	}
	if !strings.HasSuffix(got, " c ok") {
		t.Errorf("a line under MinLen was scrubbed: %q", got)
	}
}

func TestShortValuesAreNotScrubbed(t *testing.T) {
	s := New("1", "true", "12345")
	if got := s.String("1 true 12345"); got != "1 true 12345" {
		t.Errorf("short values scrubbed: %q", got)
	}
}

func TestLongerSecretMaskedWhole(t *testing.T) {
	s := New("abcdef", "abcdefghij")
	if got := s.String("xabcdefghijx"); got != "x"+Marker+"x" {
		t.Errorf("got %q", got)
	}
}

func TestLearnWhileScrubbing(t *testing.T) {
	s := New()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			tok := fmt.Sprintf("token-%d-xyz", i)
			s.Learn(tok)
			if got := s.String("[" + tok + "]"); got != "["+Marker+"]" {
				t.Errorf("a learned token is not scrubbed at once: %q", got)
			}
		})
	}
	wg.Wait()
}

func TestErrorKeepsItsCauses(t *testing.T) {
	sentinel, other := errors.New("sentinel"), errors.New("other")
	s := New("secret-value")
	err := s.Error(fmt.Errorf("server said secret-value: %w", sentinel), sentinel, other)
	if strings.Contains(err.Error(), "secret-value") || !errors.Is(err, sentinel) || errors.Is(err, other) {
		t.Errorf("err = %v, Is sentinel = %v, Is other = %v", err, errors.Is(err, sentinel), errors.Is(err, other))
	}
	if s.Error(nil) != nil {
		t.Error("nil error became non-nil")
	}
	var none *Scrubber
	if none.String("secret-value") != "secret-value" {
		t.Error("a nil Scrubber changed text")
	}
}

// The scrubbed error unwraps to nothing that holds the secret: not the
// original, not a *url.Error, and only a scrubbed copy of a JSON-RPC
// error, whose code is kept and whose data is dropped; even when the text
// had nothing to scrub.
func TestErrorChainHoldsNoSecret(t *testing.T) {
	s := New("secret-value")
	rpc := &jsonrpc.Error{Code: -32001, Message: "echo secret-value", Data: json.RawMessage(`"secret-value"`)}
	for name, orig := range map[string]error{
		"in the text":     fmt.Errorf("calling: %w", &url.Error{Op: "Post", URL: "http://u:secret-value@h/", Err: rpc}),
		"not in the text": fmt.Errorf("calling: %w", &hidden{err: rpc}),
	} {
		err := s.Error(orig, context.Canceled)
		var links []error
		for todo := []error{err}; len(todo) > 0; todo = todo[1:] {
			links = append(links, todo[0])
			switch u := todo[0].(type) {
			case interface{ Unwrap() error }:
				todo = append(todo, u.Unwrap())
			case interface{ Unwrap() []error }:
				todo = append(todo, u.Unwrap()...)
			}
		}
		for _, l := range links {
			if l != nil && strings.Contains(fmt.Sprintf("%v %+v %#v", l, l, l), "secret-value") {
				t.Errorf("%s: link %T shows the secret", name, l)
			}
		}
		var got *jsonrpc.Error
		if !errors.As(err, &got) || got.Code != rpc.Code || got.Message != "echo "+Marker || got.Data != nil {
			t.Errorf("%s: JSON-RPC error = %+v, want a scrubbed copy", name, got)
		}
		if ue := (*url.Error)(nil); errors.As(err, &ue) {
			t.Errorf("%s: the *url.Error is still in the chain", name)
		}
		if errors.Is(err, context.Canceled) {
			t.Errorf("%s: matches a kept error the original did not match", name)
		}
	}
}

// hidden is an error whose text does not show what it wraps.
type hidden struct{ err error }

func (h *hidden) Error() string { return "something failed" }
func (h *hidden) Unwrap() error { return h.err }

func TestCutDropsTheBeginningOfASecret(t *testing.T) {
	s := New("0123456789")
	if got := s.Cut("abcdef01234", 9); got != "abcdef" {
		t.Errorf("Cut = %q", got)
	}
}

func TestPEMArmourIsNotASecret(t *testing.T) {
	s := New("-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n")
	got := s.String("-----BEGIN PRIVATE KEY----- MIIEvQIBADANBgkqhkiG9w0BAQEFAASC")
	if got != "-----BEGIN PRIVATE KEY----- "+Marker {
		t.Errorf("got %q", got)
	}
}

// The URL userinfo pair is scrubbed in its Basic authentication form.
func TestBasicAuthForm(t *testing.T) {
	s := New("alice:pa55word-x")
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("alice:pa55word-x"))
	if got := s.String(basic); got != "Basic "+Marker {
		t.Errorf("got %q", got)
	}
}

// Learned values are bounded: the oldest are forgotten, configured ones
// never.
func TestLearnedValuesAreBounded(t *testing.T) {
	s := New("configured-secret")
	for i := range maxLearned + 10 {
		s.Learn(fmt.Sprintf("token-%03d-abcdef", i))
	}
	if got := s.String("configured-secret"); got != Marker {
		t.Errorf("a configured secret was forgotten: %q", got)
	}
	if got := s.String("token-000-abcdef"); got == Marker {
		t.Error("the oldest learned token is still kept past the bound")
	}
	last := fmt.Sprintf("token-%03d-abcdef", maxLearned+9)
	if got := s.String(last); got != Marker {
		t.Errorf("the newest token is not scrubbed: %q", got)
	}
	huge := strings.Repeat("h", maxFormsLen+1)
	s.Learn(huge)
	if s.String(huge) != Marker || s.Longest() != len(huge) {
		t.Error("a huge value is not scrubbed as it is")
	}
}

// worstLearned is a learned value that costs the most forms within the
// bounds: maxFormsLen bytes of short lines, each with blanks to trim.
func worstLearned(i int) string {
	var b strings.Builder
	for n := 0; b.Len() < maxFormsLen-16; n++ {
		fmt.Fprintf(&b, " v%02d-%05d \n", i%100, n)
	}
	return b.String()
}

// A server cannot make Learn derive unbounded forms: a multi-line learned
// value has at most maxFormsPerLearned, and the Scrubber at most
// maxLearned times that, however its values are shaped; the value and its
// first lines are still scrubbed.
func TestLearnedFormsAreBounded(t *testing.T) {
	s := New()
	first := worstLearned(0)
	s.Learn(first)
	if n := len(s.load().forms); n > maxFormsPerLearned {
		t.Fatalf("one learned value has %d forms, want at most %d", n, maxFormsPerLearned)
	}
	line := strings.TrimSpace(strings.SplitN(first, "\n", 2)[0])
	if got := s.String(first + " " + line); got != Marker+" "+Marker {
		t.Errorf("the value or its first line is not scrubbed: %q", got)
	}
	for i := range maxLearned {
		s.Learn(worstLearned(i + 1))
	}
	if n := len(s.load().forms); n > maxLearned*maxFormsPerLearned {
		t.Errorf("%d forms after %d worst-case values, want at most %d", n, maxLearned, maxLearned*maxFormsPerLearned)
	}
}

// BenchmarkLearnAfterWorstCase is the cost of learning one token (a
// refresh) once the Scrubber holds the worst-case values: many short
// lines, or one long line each.
func BenchmarkLearnAfterWorstCase(b *testing.B) {
	for name, value := range map[string]func(int) string{
		"lines": worstLearned,
		"long":  func(i int) string { return strings.Repeat(fmt.Sprintf(`L%03d"+/<&`, i), maxFormsLen/10) + "x" },
	} {
		b.Run(name, func(b *testing.B) {
			s := New()
			for i := range maxLearned {
				s.Learn(value(i))
			}
			n := 0
			for b.Loop() {
				n++
				s.Learn(fmt.Sprintf("token-%d-%s", n, strings.Repeat("t", 1000)))
			}
			b.ReportMetric(float64(len(s.load().forms)), "forms")
		})
	}
}

// An error's text leaves scrubbed and bounded, cut on a UTF-8 boundary
// with a marker, and its chain still matches what it matched.
func TestErrorTextIsBounded(t *testing.T) {
	sentinel := errors.New("sentinel")
	s := New("SECRET-VALUE-0123456789")
	huge := "SECRET-VALUE-0123456789 " + strings.Repeat("é", 3<<20) // 2 bytes a rune: odd cuts split one
	for _, off := range []int{0, 1} {
		text := strings.Repeat("x", off) + huge
		err := s.Error(fmt.Errorf("listing: %w: %w", sentinel, &jsonrpc.Error{Code: 7, Message: text}), sentinel)
		msg := err.Error()
		if len(msg) > MaxErrorBytes+len(ErrorTruncated) || !strings.HasSuffix(msg, ErrorTruncated) || !utf8.ValidString(msg) || strings.Contains(msg, "SECRET-VALUE") {
			t.Errorf("error text of %d bytes (valid UTF-8 %v, marked %v), want at most %d, marked, scrubbed", len(msg), utf8.ValidString(msg), strings.HasSuffix(msg, ErrorTruncated), MaxErrorBytes+len(ErrorTruncated))
		}
		var rpc *jsonrpc.Error
		if !errors.Is(err, sentinel) || !errors.As(err, &rpc) || rpc.Code != 7 || len(rpc.Message) > MaxErrorBytes+len(ErrorTruncated) {
			t.Errorf("chain: Is sentinel %v, JSON-RPC error %v", errors.Is(err, sentinel), rpc != nil)
		}
	}
	if got := BoundError("short"); got != "short" {
		t.Errorf("BoundError(short) = %q", got)
	}
}

// A validator's error text can run to megabytes: ErrorString cuts it to
// maxScrubbedErrorBytes before scrubbing (the scrub allocates no more than
// that), and that first cut drops the part of a secret it split, even when
// scrubbing then shrinks the text below MaxErrorBytes.
func TestErrorStringCutsBeforeScrubbing(t *testing.T) {
	long := strings.Repeat("LONG-SECRET-", 16000/12) // shrinks to a marker when scrubbed
	s := New(long, "SECRET-VALUE-0123456789")
	text := strings.Repeat(long, 5) // the fifth crosses maxScrubbedErrorBytes
	got := s.ErrorString(text)
	if strings.Contains(got, "LONG-SECRET") || !strings.HasSuffix(got, ErrorTruncated) {
		t.Errorf("the first cut left part of a secret, or no mark: %q", got)
	}
	huge := strings.Repeat("SECRET-VALUE-0123456789 ", 16<<20/24)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got = s.ErrorString(huge)
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4*maxScrubbedErrorBytes {
		t.Errorf("scrubbing a %d-byte error text allocated %d bytes: it was not cut first", len(huge), alloc)
	}
	if strings.Contains(got, "SECRET-VALUE") || !strings.HasSuffix(got, ErrorTruncated) {
		t.Errorf("huge text: %q", got)
	}
}
