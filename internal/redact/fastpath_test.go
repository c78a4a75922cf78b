package redact

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"unsafe"
)

// String's fast path (no copy of a clean text) gives what the Replacer
// alone gives, for any secret and text.
func FuzzStringFastPathEqualsReplacer(f *testing.F) {
	f.Add("hunter2-secret-value", "token=hunter2-secret-value x")
	f.Add("a\nbcdefgh\n", "zzbcdefghzz")
	f.Add("p@ss w/rd+&=", "p%40ss+w%2Frd%2B%26%3D")
	f.Add("\n", "a\nb")
	f.Add("x\ny", "")
	f.Fuzz(func(t *testing.T, secret, text string) {
		s := New(secret)
		s.Learn(secret + "L")
		want := s.load().rep.Replace(text)
		if got := s.String(text); got != want {
			t.Fatalf("fast path %q != replacer %q", got, want)
		}
	})
}

// Each shape of Replacer strings builds that a Scrubber meets (no form,
// one form, several forms) is scrubbed, and a clean text comes back uncopied.
func TestStringFastPathEveryReplacerShape(t *testing.T) {
	for _, tc := range []struct {
		name    string
		secrets []string
		generic bool
	}{
		{"none", nil, false},
		{"one form", []string{strings.Repeat("k", maxFormsLen+1)}, false}, // too long to encode
		{"several forms", []string{"hunter2-secret-value"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(tc.secrets...)
			snap := s.load()
			if snap.probe != tc.generic {
				t.Fatalf("probe = %v for forms %q, want %v", snap.probe, snap.forms, tc.generic)
			}
			clean := strings.Repeat("nothing to see here ", 10)
			if got := s.String(clean); unsafe.StringData(got) != unsafe.StringData(clean) {
				t.Error("a clean text was copied")
			}
			for _, f := range snap.forms {
				text := "<" + f + ">"
				if got, want := s.String(text), snap.rep.Replace(text); got != want || !strings.Contains(got, Marker) {
					t.Errorf("String(%q) = %q, want %q", text, got, want)
				}
			}
		})
	}
}

// The fast path with many learned tokens (64 JWT-like tokens, some 390
// forms) over a stderr-sized text: its one scan must cost no more than
// the Replacer's (a strings.Contains per form cost ~30 times as much).
func BenchmarkStringManyLearned(b *testing.B) {
	s := New("configured-secret-1")
	for i := range 64 {
		payload := base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, `{"sub":"user","iat":%d,"exp":%d,"scope":"read write"}`, 1700000000+i, 1700003600+i))
		s.Learn("eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9." + payload + "." + strings.Repeat("sig", 86))
	}
	snap := s.load()
	line := "2026-12-02T01:02:03Z INFO handling request for tool echo with args {\"text\":\"hello\"}\n"
	for _, n := range []int{120, 4096} {
		text := strings.Repeat(line, n/len(line)+1)[:n]
		b.Run(fmt.Sprintf("forms=%d/len=%d/fast", len(snap.forms), n), func(b *testing.B) {
			for b.Loop() {
				s.String(text)
			}
		})
		b.Run(fmt.Sprintf("forms=%d/len=%d/replacer", len(snap.forms), n), func(b *testing.B) {
			for b.Loop() {
				snap.rep.Replace(text)
			}
		})
	}
}
