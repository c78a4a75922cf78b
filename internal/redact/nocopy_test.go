package redact

import (
	"strings"
	"testing"
	"unsafe"
)

// A text with no secret in it comes back as the same string, not a copy
// (a connection keeps many such texts); one with a secret is still
// scrubbed.
func TestStringWithoutSecretIsNotCopied(t *testing.T) {
	s := New("hunter2-secret-value", "other-secret-value")
	clean := strings.Repeat("a tool description with no secret in it. ", 20)
	if got := s.String(clean); unsafe.StringData(got) != unsafe.StringData(clean) {
		t.Error("a text with no secret was copied")
	}
	if got := s.String("token=hunter2-secret-value"); strings.Contains(got, "hunter2") || !strings.Contains(got, Marker) {
		t.Errorf("String = %q, want the secret replaced by %q", got, Marker)
	}
	if allocs := testing.AllocsPerRun(100, func() { s.String(clean) }); allocs != 0 {
		t.Errorf("String of a clean text allocates %v times, want 0", allocs)
	}
}
