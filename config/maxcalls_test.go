package config

import (
	"encoding/json"
	"strings"
	"testing"
)

// max_concurrent_calls: absent and 0 are unlimited, 1..1024 a limit.

func TestMaxConcurrentCallsParseAndRoundTrip(t *testing.T) {
	f, err := Parse([]byte(`{"servers":{
		"a": {"type":"local","command":["x"],"max_concurrent_calls":1},
		"b": {"type":"local","command":["x"],"max_concurrent_calls":0},
		"c": {"type":"local","command":["x"]},
		"d": {"type":"local","command":["x"],"max_concurrent_calls":null},
		"e": {"type":"local","command":["x"],"max_concurrent_calls":1024}}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []int{1, 0, 0, 0, 1024}
	for i, s := range f.Servers {
		if s.MaxConcurrentCalls != want[i] {
			t.Errorf("%s: MaxConcurrentCalls = %d, want %d", s.Name, s.MaxConcurrentCalls, want[i])
		}
		if err := s.Validate(); err != nil {
			t.Errorf("%s: Validate = %v", s.Name, err)
		}
	}
	out, err := Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	// Written when set; 0 is the default and is left out like any default.
	if n := strings.Count(string(out), `"max_concurrent_calls"`); n != 2 {
		t.Errorf("max_concurrent_calls written %d times, want 2 (a and e):\n%s", n, out)
	}
	again, err := Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range again.Servers {
		if !s.Equal(f.Servers[i]) {
			t.Errorf("%s changed in a round trip: %v, want %v", s.Name, s, f.Servers[i])
		}
	}
}

func TestMaxConcurrentCallsDecodeErrors(t *testing.T) {
	for _, raw := range []string{`"4"`, `2.5`, `true`, `[1]`} {
		_, err := Parse([]byte(`{"servers":{"a":{"max_concurrent_calls":` + raw + `}}}`))
		if err == nil || fieldOf(t, err).Field != "max_concurrent_calls" || !strings.Contains(err.Error(), "integer") {
			t.Errorf("%s: Parse = %v, want an integer error on max_concurrent_calls", raw, err)
		}
	}
	_, err := DecodeServer([]byte(`{"name":"x","type":"local","command":["x"],"max_concurrent_calls":-1}`))
	if err == nil || fieldOf(t, err).Field != "max_concurrent_calls" {
		t.Errorf("DecodeServer with -1 = %v, want a max_concurrent_calls error", err)
	}
	s, err := DecodeServer([]byte(`{"name":"x","type":"local","command":["x"],"max_concurrent_calls":3}`))
	if err != nil || s.MaxConcurrentCalls != 3 {
		t.Errorf("DecodeServer with 3 = %d, %v", s.MaxConcurrentCalls, err)
	}
}

func TestMaxConcurrentCallsValidate(t *testing.T) {
	for _, n := range []int{0, 1, 2, 8, MaxConcurrentCallsLimit} {
		s := localServer()
		s.MaxConcurrentCalls = n
		if err := s.Validate(); err != nil {
			t.Errorf("%d: Validate = %v", n, err)
		}
	}
	for _, n := range []int{-1, MaxConcurrentCallsLimit + 1, 1 << 40} {
		s := localServer()
		s.MaxConcurrentCalls = n
		err := s.Validate()
		if err == nil {
			t.Errorf("%d: Validate succeeded", n)
			continue
		}
		fe := fieldOf(t, err)
		if fe.Field != "max_concurrent_calls" || fe.Server != "fs" || !strings.Contains(fe.Message, "between 0") || !strings.Contains(fe.Message, "1024") {
			t.Errorf("%d: error %+v, want max_concurrent_calls of fs between 0 and 1024", n, fe)
		}
	}
}

func TestMaxConcurrentCallsPatch(t *testing.T) {
	base := localServer()
	base.MaxConcurrentCalls = 4
	for _, tt := range []struct {
		patch string
		want  int
	}{
		{`{}`, 4},                           // absent keeps
		{`{"enabled":false}`, 4},            // another field keeps
		{`{"max_concurrent_calls":1}`, 1},   // present replaces
		{`{"max_concurrent_calls":0}`, 0},   // 0 puts back unlimited
		{`{"max_concurrent_calls":16}`, 16}, // and raises
	} {
		got, err := ApplyPatch(base, []byte(tt.patch))
		if err != nil {
			t.Errorf("%s: %v", tt.patch, err)
			continue
		}
		if got.MaxConcurrentCalls != tt.want {
			t.Errorf("%s: MaxConcurrentCalls = %d, want %d", tt.patch, got.MaxConcurrentCalls, tt.want)
		}
		if base.MaxConcurrentCalls != 4 {
			t.Fatalf("%s: base modified", tt.patch)
		}
	}
	for _, tt := range []struct{ patch, msg string }{
		{`{"max_concurrent_calls":null}`, "null"},
		{`{"max_concurrent_calls":"2"}`, "integer"},
		{`{"max_concurrent_calls":-3}`, "between"},
		{`{"max_concurrent_calls":1025}`, "between"},
	} {
		_, err := ApplyPatch(base, []byte(tt.patch))
		if err == nil {
			t.Errorf("%s: ApplyPatch succeeded", tt.patch)
			continue
		}
		if fe := fieldOf(t, err); fe.Field != "max_concurrent_calls" || fe.Server != "fs" || !strings.Contains(fe.Message, tt.msg) {
			t.Errorf("%s: error %+v, want max_concurrent_calls of fs with %q", tt.patch, fe, tt.msg)
		}
	}
}

func TestMaxConcurrentCallsView(t *testing.T) {
	s := localServer()
	if v := s.View(); v.MaxConcurrentCalls != 0 {
		t.Errorf("default view: %d, want 0 (unlimited)", v.MaxConcurrentCalls)
	}
	s.MaxConcurrentCalls = 2
	b, err := json.Marshal(s) // the response form
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"max_concurrent_calls":2`) {
		t.Errorf("response form lacks the limit: %s", b)
	}
	if c := s.Clone(); c.MaxConcurrentCalls != 2 || !c.Equal(s) {
		t.Errorf("Clone lost the limit: %d", c.MaxConcurrentCalls)
	}
}
