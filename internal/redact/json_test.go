package redact

import (
	"encoding/json"
	"testing"
)

// JSON scrubs a secret inside a string and keeps the JSON valid; a secret
// whose raw form spans JSON syntax leaves the quoted marker instead of
// broken JSON; JSON without a secret is returned as it is.
func TestJSONStaysValid(t *testing.T) {
	s := New("sk-json-planted-42", `xx","yy`)
	for in, want := range map[string]string{
		`{"a":"sk-json-planted-42"}`: `{"a":"[redacted]"}`,
		`{"a":"xx","yy":1}`:          `"[redacted]"`,
		`{"a":1}`:                    `{"a":1}`,
	} {
		if got := s.JSON(json.RawMessage(in)); string(got) != want || !json.Valid(got) {
			t.Errorf("JSON(%s) = %s, want %s", in, got, want)
		}
	}
	if s.JSON(nil) != nil {
		t.Errorf("JSON(nil) is not nil")
	}
}
