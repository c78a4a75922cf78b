package mcpconn

import (
	"encoding/json"
	"testing"
)

func TestReadableContent(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"known only, untouched", `{"content":[{"type":"text","text":"a"},{"type":"image","data":"AA==","mimeType":"image/png"}]}`, ``},
		{"unknown block becomes text", `{"content":[{"type":"text","text":"a"},{"type":"hologram","data":"x"}],"isError":false}`,
			`{"content":[{"type":"text","text":"a"},{"text":"[unsupported content: hologram]","type":"text"}],"isError":false}`},
		{"type key in structured content only", `{"content":[{"type":"text","text":"a"}],"structuredContent":{"type":"weird"}}`, ``},
		{"spaces around the colon", `{"content":[{"type" : "video"}]}`, `{"content":[{"text":"[unsupported content: video]","type":"text"}]}`},
		{"malformed stays for the SDK to report", `{"content":[{"type":"video"}`, ``},
		{"escaped type inside text", `{"content":[{"type":"text","text":"{\"type\":\"video\"}"}]}`, ``},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want := tc.want
			if want == "" {
				want = tc.in
			}
			got := string(readableContent(json.RawMessage(tc.in)))
			if !jsonEqual(got, want) {
				t.Fatalf("got  %s\nwant %s", got, want)
			}
		})
	}
}

func TestOnlyKnownTypes(t *testing.T) {
	for in, want := range map[string]bool{
		`{"content":[{"type":"text"},{"type":"resource_link"},{"type":"audio"},{"type":"resource"}]}`: true,
		`{"content":[{"type":"hologram"}]}`: false,
		`{"content":[{"type":  "text" }]}`:  true,
		`{"content":[{"type":5}]}`:          false,
		`{"content":[]}`:                    true,
	} {
		if got := onlyKnownTypes([]byte(in)); got != want {
			t.Errorf("onlyKnownTypes(%s) = %v, want %v", in, got, want)
		}
	}
}

func jsonEqual(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return a == b
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return string(ja) == string(jb)
}
