package runtime

import (
	"slices"
	"strings"
	"testing"
)

// Each platform's opener gets the URL as one argument, query and all,
// never through a shell; what is not an http(s) URL is refused, without
// the URL in the error (it may carry a state or a code).
func TestOpenerArgv(t *testing.T) {
	const u = "https://auth.example.com/authorize?client_id=a&state=b%20c&x=^"
	for goos, want := range map[string][]string{
		"linux":   {"xdg-open", u},
		"freebsd": {"xdg-open", u},
		"darwin":  {"open", u},
		"windows": {"rundll32", "url.dll,FileProtocolHandler", u},
	} {
		got, err := openerArgv(goos, u)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: %q, %v; want %q", goos, got, err, want)
		}
	}
	for _, bad := range []string{"file:///C:/Windows/System32/calc.exe", "-a Terminal", "calc", "javascript:alert(1)", "https://", "ms-settings:privacy-secret",
		`https://x/a"b c`, "http://x/ -a", "https://x/a\tb", "https://x/\x7f"} {
		for _, goos := range []string{"linux", "darwin", "windows"} {
			if got, err := openerArgv(goos, bad); err == nil {
				t.Errorf("%s: %q opened as %q", goos, bad, got)
			} else if strings.Contains(err.Error(), bad) {
				t.Errorf("%s: the error %q holds the URL", goos, err)
			}
		}
	}
}
