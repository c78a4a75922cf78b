package config

import (
	"slices"
	"testing"
)

// The env-shaped rule shows the conventional lower- and mixed-case names
// (proxies, Windows' own) and names people write with digits, and takes
// for a pasted secret what looks generated: the masked view keeps such a
// value masked, and Secrets holds the name.
func TestEnvShapedRule(t *testing.T) {
	shown := []string{
		"http_proxy", "https_proxy", "no_proxy", "HTTPS_PROXY", "Path", "PATH", "path",
		"SystemRoot", "ProgramFiles", "APPDATA", "AppData", "windir", "LocalAppData",
		"OAUTH2_TOKEN", "SHA256", "ED25519_KEY", "X509_CERT", "AWS_S3_BUCKET", "K8S_TOKEN",
		"SECP256K1", "PATH2", "GITHUB_TOKEN", "A", "_X",
	}
	hidden := []string{
		"A1B2C3D4", "A1B2C3", "AKIAIOSFODNN7", "AKIAIOSFODNN7EXAMPLE", "ASIAXYZ12345678",
		"DEADBEEF0123", "TOKEN_A1B2C3D4E5", "X_9F86D081884C", "KEY_A2024B0117", "ABCDEF1234567890",
		"lower_case", "http_proxy_token", "Path_X", "SystemRootX", "ghp_abc123def456",
	}
	for _, name := range shown {
		if !EnvShaped(name) {
			t.Errorf("EnvShaped(%q) = false", name)
		}
		v := "Bearer ${env:" + name + "}"
		s := Server{Name: "s", Type: TypeLocal, Command: []string{"x"}, Env: map[string]string{"T": v}}
		if sv := s.View().Env["T"]; sv.Reference != v {
			t.Errorf("view of %q = %+v, want the reference", v, sv)
		}
		if slices.Contains(s.Secrets(), v) {
			t.Errorf("Secrets holds the reference-only %q", v)
		}
	}
	for _, name := range hidden {
		if EnvShaped(name) {
			t.Errorf("EnvShaped(%q) = true", name)
		}
		v := "${" + name + "}"
		s := Server{Name: "s", Type: TypeLocal, Command: []string{"x"}, Env: map[string]string{"T": v}}
		if sv := s.View().Env["T"]; sv.Reference != "" || sv.Masked == "" {
			t.Errorf("view of %q = %+v, want masked", v, sv)
		}
		if !slices.Contains(s.Secrets(), name) {
			t.Errorf("Secrets of %q lacks the name", v)
		}
	}
}
