package mcpconn

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/openprogram/mcpvisor/tools"
)

// withAppMeta takes a ui:// resource URI (nested first, then the
// deprecated flat key) and the known audiences of the visibility, and
// nothing malformed, foreign or overlong.
func TestWithAppMeta(t *testing.T) {
	long := "ui://" + strings.Repeat("a", maxUIResourceURI)
	def := tools.DefaultVisibility()
	for _, tc := range []struct {
		name, meta string
		uri        string
		visibility []string
	}{
		{"none", ``, "", def},
		{"nested", `{"ui":{"resourceUri":"ui://s/v"}}`, "ui://s/v", def},
		{"flat, deprecated", `{"ui/resourceUri":"ui://s/flat"}`, "ui://s/flat", def},
		{"nested wins", `{"ui":{"resourceUri":"ui://s/n"},"ui/resourceUri":"ui://s/flat"}`, "ui://s/n", def},
		{"nested but not ui://: the flat key is not tried", `{"ui":{"resourceUri":"https://x"},"ui/resourceUri":"ui://s/flat"}`, "", def},
		{"https", `{"ui":{"resourceUri":"https://evil.example/x"}}`, "", def},
		{"bare scheme", `{"ui":{"resourceUri":"ui://"}}`, "", def},
		{"not a string", `{"ui":{"resourceUri":7}}`, "", def},
		{"too long", `{"ui":{"resourceUri":"` + long + `"}}`, "", def},
		{"ui not an object", `{"ui":"x"}`, "", def},
		{"app only", `{"ui":{"resourceUri":"ui://s/v","visibility":["app"]}}`, "ui://s/v", []string{"app"}},
		{"reordered, repeated, unknown", `{"ui":{"visibility":["app","x","model","app"]}}`, "", def},
		{"empty", `{"ui":{"visibility":[]}}`, "", []string{}},
		{"unknown only", `{"ui":{"visibility":["MODEL"]}}`, "", []string{}},
		{"null", `{"ui":{"visibility":null}}`, "", def},
		{"malformed", `{"ui":{"visibility":"model"}}`, "", def},
	} {
		var raw json.RawMessage
		if tc.meta != "" {
			raw = json.RawMessage(tc.meta)
		}
		got := withAppMeta(raw, tools.NewTool("s__t", "s", "t", "", nil, nil))
		if got.UIResourceURI != tc.uri || !slices.Equal(got.Visibility, tc.visibility) || (got.Visibility == nil) != (tc.visibility == nil) {
			t.Errorf("%s: uri %q visibility %#v, want %q %#v", tc.name, got.UIResourceURI, got.Visibility, tc.uri, tc.visibility)
		}
	}
}

// The extension is advertised only when the host renders apps, with the
// SDK's default roots capability kept.
func TestCapabilitiesAdvertiseApps(t *testing.T) {
	if c := capabilities(Features{}); c != nil {
		t.Errorf("capabilities without apps = %+v, want the SDK's default (nil)", c)
	}
	c := capabilities(Features{RendersApps: true})
	raw, _ := json.Marshal(c.Extensions)
	if string(raw) != `{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}` || c.RootsV2 == nil || !c.RootsV2.ListChanged {
		t.Errorf("capabilities with apps = extensions %s, roots %+v", raw, c.RootsV2)
	}
}
