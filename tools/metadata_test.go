package tools

import (
	"encoding/json"
	"testing"
)

// TestHintsDefaults: Hints fills in the spec's defaults for hints not sent,
// keeps the ones sent, and stores nothing.
func TestHintsDefaults(t *testing.T) {
	yes, no := true, false
	cases := []struct {
		name string
		a    *Annotations
		want Hints
	}{
		{"no annotations", nil, Hints{Destructive: true, OpenWorld: true}},
		{"none sent", &Annotations{Title: "t"}, Hints{Destructive: true, OpenWorld: true}},
		{"some sent", &Annotations{ReadOnlyHint: &yes, OpenWorldHint: &no}, Hints{ReadOnly: true, Destructive: true}},
		{"all sent against the defaults", &Annotations{ReadOnlyHint: &yes, DestructiveHint: &no, IdempotentHint: &yes, OpenWorldHint: &no}, Hints{ReadOnly: true, Idempotent: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var before []byte
			if tc.a != nil {
				before, _ = json.Marshal(tc.a)
			}
			if got := tc.a.Hints(); got != tc.want {
				t.Errorf("Hints() = %+v, want %+v", got, tc.want)
			}
			if tc.a != nil {
				if after, _ := json.Marshal(tc.a); string(after) != string(before) {
					t.Errorf("Hints stored defaults: %s became %s", before, after)
				}
			}
		})
	}
}

// TestAnnotationsJSON: a hint not sent is omitted, a false one sent is kept.
func TestAnnotationsJSON(t *testing.T) {
	no := false
	b, err := json.Marshal(Annotations{DestructiveHint: &no})
	if err != nil || string(b) != `{"destructive_hint":false}` {
		t.Errorf("annotations = %s (err %v)", b, err)
	}
}
