package config

import (
	"strings"
	"testing"
	"time"
)

// connect_timeout_seconds, max_call_seconds, max_output_bytes,
// max_media_bytes and protocol_version: parsed, written back only when
// set, validated with the field named, patched by replacement, viewed
// with the defaults applied.

func TestLimitsParseRoundTripAndDefaults(t *testing.T) {
	f, err := Parse([]byte(`{"servers":{
		"a": {"type":"local","command":["x"],"timeout_seconds":20,"connect_timeout_seconds":120,"max_call_seconds":600,
		      "max_output_bytes":-1,"max_media_bytes":2048,"protocol_version":"2025-11-25"},
		"b": {"type":"local","command":["x"]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	a, b := f.Servers[0], f.Servers[1]
	for _, s := range f.Servers {
		if err := s.Validate(); err != nil {
			t.Fatalf("%s: Validate = %v", s.Name, err)
		}
	}
	if a.ConnectTimeout() != 120*time.Second || a.Timeout() != 20*time.Second || a.MaxCallDuration() != 600*time.Second {
		t.Errorf("a: connect %v, call %v, max call %v", a.ConnectTimeout(), a.Timeout(), a.MaxCallDuration())
	}
	if text, media := a.OutputCaps(); text != NoCap || media != 2048 {
		t.Errorf("a: OutputCaps = %d, %d; want -1, 2048", text, media)
	}
	// Defaults: connect = call timeout, max call = 10 × it, 256 KiB / 5 MiB.
	if b.ConnectTimeout() != DefaultTimeoutSeconds*time.Second || b.MaxCallDuration() != 10*DefaultTimeoutSeconds*time.Second {
		t.Errorf("b: connect %v, max call %v", b.ConnectTimeout(), b.MaxCallDuration())
	}
	if text, media := b.OutputCaps(); text != DefaultMaxOutputBytes || media != DefaultMaxMediaBytes {
		t.Errorf("b: OutputCaps = %d, %d", text, media)
	}
	v := b.View()
	if v.ConnectTimeoutSeconds != 30 || v.MaxCallSeconds != 300 || v.MaxOutputBytes != 256<<10 || v.MaxMediaBytes != 5<<20 || v.ProtocolVersion != "" {
		t.Errorf("b: view = %+v", v)
	}
	out, err := Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"connect_timeout_seconds", "max_call_seconds", "max_output_bytes", "max_media_bytes", "protocol_version"} {
		if n := strings.Count(string(out), `"`+key+`"`); n != 1 {
			t.Errorf("%s written %d times, want 1 (a only):\n%s", key, n, out)
		}
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

func TestLimitsMaxCallBounds(t *testing.T) {
	s := localServer()
	s.TimeoutSeconds = MaxTimeoutSeconds
	if got := s.MaxCallDuration(); got != 10*time.Hour {
		t.Errorf("default for a 3600 s timeout: %v, want 10h", got)
	}
	s.MaxCallSeconds = MaxCallSecondsLimit
	if err := s.Validate(); err != nil || s.MaxCallDuration() != 24*time.Hour {
		t.Errorf("a day: %v, %v", s.MaxCallDuration(), err)
	}
	s.MaxCallSeconds = 10 // unvalidated, below the call timeout
	if got := s.MaxCallDuration(); got != time.Hour {
		t.Errorf("below the call timeout: %v, want the call timeout", got)
	}
}

func TestLimitsValidateNamesTheField(t *testing.T) {
	for _, tc := range []struct{ body, field string }{
		{`"connect_timeout_seconds":0`, "connect_timeout_seconds"},
		{`"connect_timeout_seconds":-5`, "connect_timeout_seconds"},
		{`"connect_timeout_seconds":3601`, "connect_timeout_seconds"},
		{`"max_call_seconds":0`, "max_call_seconds"},
		{`"max_call_seconds":86401`, "max_call_seconds"},
		{`"timeout_seconds":60,"max_call_seconds":30`, "max_call_seconds"},
		{`"max_output_bytes":0`, "max_output_bytes"},
		{`"max_output_bytes":-2`, "max_output_bytes"},
		{`"max_output_bytes":100`, "max_output_bytes"},
		{`"max_output_bytes":16777217`, "max_output_bytes"},
		{`"max_media_bytes":0`, "max_media_bytes"},
		{`"protocol_version":"2099-01-01"`, "protocol_version"},
		{`"protocol_version":3`, "protocol_version"},
		{`"max_call_seconds":"10"`, "max_call_seconds"},
	} {
		_, err := DecodeServer([]byte(`{"name":"x","type":"local","command":["x"],` + tc.body + `}`))
		if err == nil {
			t.Errorf("%s: accepted", tc.body)
			continue
		}
		if got := fieldOf(t, err).Field; got != tc.field {
			t.Errorf("%s: error on %q, want %q: %v", tc.body, got, tc.field, err)
		}
	}
	_, err := DecodeServer([]byte(`{"name":"x","type":"local","command":["x"],"protocol_version":"2099-01-01"}`))
	if err == nil || !strings.Contains(err.Error(), "2025-11-25") {
		t.Errorf("the protocol_version error lists what is supported: %v", err)
	}
}

func TestLimitsPatchReplaces(t *testing.T) {
	base := localServer()
	base.MaxOutputBytes = 4096
	s, err := ApplyPatch(base, []byte(`{"connect_timeout_seconds":90,"protocol_version":"2025-06-18"}`))
	if err != nil {
		t.Fatal(err)
	}
	if s.ConnectTimeoutSeconds != 90 || s.ProtocolVersion != "2025-06-18" || s.MaxOutputBytes != 4096 {
		t.Errorf("patched = %+v; want connect 90, pin 2025-06-18, output cap kept", s.View())
	}
	s, err = ApplyPatch(s, []byte(`{"protocol_version":"","max_output_bytes":-1}`))
	if err != nil {
		t.Fatal(err)
	}
	if s.ProtocolVersion != "" || s.MaxOutputBytes != NoCap || s.ConnectTimeoutSeconds != 90 {
		t.Errorf("patched = %+v; want the pin lifted, no cap, connect kept", s.View())
	}
	if _, err := ApplyPatch(s, []byte(`{"max_output_bytes":-2}`)); err == nil || fieldOf(t, err).Field != "max_output_bytes" ||
		!strings.Contains(err.Error(), "0 puts back the default") {
		t.Errorf("PATCH max_output_bytes -2 = %v, want an error on the field saying 0 puts back the default", err)
	}
	if _, err := ApplyPatch(s, []byte(`{"max_call_seconds":null}`)); err == nil || fieldOf(t, err).Field != "max_call_seconds" {
		t.Errorf("PATCH null = %v, want an error on the field", err)
	}
}

// In a PATCH, 0 puts back the default of the four limits, which then
// follows timeout_seconds again; the entry is written as if the field
// had been left out. In the file and a create request 0 stays an error.
func TestLimitsPatchZeroPutsBackTheDefault(t *testing.T) {
	base := localServer()
	base.ConnectTimeoutSeconds, base.MaxCallSeconds, base.MaxOutputBytes, base.MaxMediaBytes = 90, 900, 4096, NoCap
	s, err := ApplyPatch(base, []byte(`{"connect_timeout_seconds":0,"max_call_seconds":0,"max_output_bytes":0,"max_media_bytes":0}`))
	if err != nil {
		t.Fatal(err)
	}
	if text, media := s.OutputCaps(); text != DefaultMaxOutputBytes || media != DefaultMaxMediaBytes {
		t.Errorf("caps after PATCH 0 = %d, %d; want the defaults", text, media)
	}
	s, err = ApplyPatch(s, []byte(`{"timeout_seconds":40}`))
	if err != nil {
		t.Fatal(err)
	}
	if s.ConnectTimeout() != 40*time.Second || s.MaxCallDuration() != 400*time.Second {
		t.Errorf("after PATCH 0 the defaults do not follow timeout_seconds: connect %v, max call %v", s.ConnectTimeout(), s.MaxCallDuration())
	}
	if !s.Equal(func() Server { d := localServer(); d.TimeoutSeconds = 40; return d }()) {
		t.Errorf("PATCH 0 left a trace: %+v", s.View())
	}
	out, err := Marshal(&File{Servers: []Server{s}})
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"connect_timeout_seconds", "max_call_seconds", "max_output_bytes", "max_media_bytes"} {
		if strings.Contains(string(out), key) {
			t.Errorf("%s written after PATCH 0:\n%s", key, out)
		}
	}
	_, err = DecodeServer([]byte(`{"name":"x","type":"local","command":["x"],"max_media_bytes":0}`))
	if err == nil || !strings.Contains(err.Error(), "leave it out for the default") {
		t.Errorf("create with max_media_bytes 0 = %v, want an error saying to leave it out", err)
	}
}
