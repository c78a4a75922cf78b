package adapter_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/openprogram/mcpvisor/adapter"
)

var (
	validName   = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	notNameRune = regexp.MustCompile(`[^A-Za-z0-9_-]`)
)

// refSanitize is an independent statement of the S4 alphabet rule, so the
// tests do not trust the code they check.
func refSanitize(s string) string {
	if s == "" {
		return "_"
	}
	return notNameRune.ReplaceAllString(s, "_")
}

// checkToolName asserts every property ToolName promises for one input.
func checkToolName(t *testing.T, server, tool, got string) {
	t.Helper()
	if !validName.MatchString(got) {
		t.Fatalf("ToolName(%q, %q) = %q, does not match %s", server, tool, got, validName)
	}
	if again := adapter.ToolName(server, tool); again != got {
		t.Fatalf("ToolName(%q, %q) not deterministic: %q then %q", server, tool, got, again)
	}
	s, tl := refSanitize(server), refSanitize(tool)
	maxTool := adapter.MaxToolNameLen - len(adapter.Separator) - 1
	if len(tl) > maxTool {
		tl = tl[len(tl)-maxTool:]
	}
	if !strings.HasSuffix(got, adapter.Separator+tl) {
		t.Fatalf("ToolName(%q, %q) = %q, want suffix %q", server, tool, got, adapter.Separator+tl)
	}
	serverPart := strings.TrimSuffix(got, adapter.Separator+tl)
	if serverPart == "" || !strings.HasPrefix(s, serverPart) {
		t.Fatalf("ToolName(%q, %q) = %q: server part %q is not a non-empty prefix of %q", server, tool, got, serverPart, s)
	}
	// The server part is cut only when the whole name would not fit.
	if serverPart != s && len(got) != adapter.MaxToolNameLen {
		t.Fatalf("ToolName(%q, %q) = %q: server shortened but name is %d chars, not %d", server, tool, got, len(got), adapter.MaxToolNameLen)
	}
}

func TestToolName(t *testing.T) {
	a := func(n int) string { return strings.Repeat("a", n) }
	tests := []struct {
		name         string
		server, tool string
		want         string
	}{
		{"plain", "drawio", "open_drawio_xml", "drawio__open_drawio_xml"},
		{"hyphens and digits kept", "srv-1", "Tool-2_x", "srv-1__Tool-2_x"},
		{"dots and spaces", "my.server", "get weather now", "my_server__get_weather_now"},
		{"slash and colon", "git/hub", "repo:list", "git_hub__repo_list"},
		{"unicode one underscore per rune", "héllo", "天気", "h_llo____"},
		{"emoji", "a😀b", "x", "a_b__x"},
		{"invalid utf-8", "\xff\xfe", "t", "____t"},
		{"newline and tab", "a\nb", "c\td", "a_b__c_d"},
		{"empty server", "", "tool", "___tool"},
		{"empty tool", "srv", "", "srv___"},
		{"both empty", "", "", "____"},
		{"exactly 64", a(30), strings.Repeat("t", 32), a(30) + "__" + strings.Repeat("t", 32)},
		{"65 shortens server by one", a(31), strings.Repeat("t", 32), a(30) + "__" + strings.Repeat("t", 32)},
		{"long server", a(100), "t", a(61) + "__t"},
		{"long server sanitised before cut", strings.Repeat("é", 100), "t", strings.Repeat("_", 61) + "__t"},
		{"tool of 61 leaves one server char", "server", strings.Repeat("t", 61), "s__" + strings.Repeat("t", 61)},
		{"tool of 62 keeps last 61", "server", "X" + strings.Repeat("t", 61), "s__" + strings.Repeat("t", 61)},
		{"long tool keeps its end", "srv", strings.Repeat("x", 200) + "_the_end", "s__" + strings.Repeat("x", 53) + "_the_end"},
		{"both long", a(100), strings.Repeat("b", 100) + "Z", "a__" + strings.Repeat("b", 60) + "Z"},
		{"long unicode tool", "srv", strings.Repeat("ü", 70), "s__" + strings.Repeat("_", 61)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := adapter.ToolName(tt.server, tt.tool)
			if got != tt.want {
				t.Errorf("ToolName(%q, %q) = %q, want %q", tt.server, tt.tool, got, tt.want)
			}
			checkToolName(t, tt.server, tt.tool, got)
		})
	}
}

func FuzzToolName(f *testing.F) {
	f.Add("drawio", "open_drawio_xml")
	f.Add("", "")
	f.Add("héllo wörld", "天気.forecast")
	f.Add(strings.Repeat("s", 80), strings.Repeat("t", 80))
	f.Add("\xff", "\x00\n")
	f.Add(strings.Repeat("a", 31), strings.Repeat("b", 32))
	f.Fuzz(func(t *testing.T, server, tool string) {
		checkToolName(t, server, tool, adapter.ToolName(server, tool))
	})
}
