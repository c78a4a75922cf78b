package redact

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
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
	sentinel := errors.New("sentinel")
	s := New("secret-value")
	err := s.Error(fmt.Errorf("server said secret-value: %w", sentinel))
	if strings.Contains(err.Error(), "secret-value") || !errors.Is(err, sentinel) {
		t.Errorf("err = %v, Is sentinel = %v", err, errors.Is(err, sentinel))
	}
	if s.Error(nil) != nil {
		t.Error("nil error became non-nil")
	}
	var none *Scrubber
	if none.String("secret-value") != "secret-value" {
		t.Error("a nil Scrubber changed text")
	}
}

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
