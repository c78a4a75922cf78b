package binding

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/openprogram/mcpvisor/adapter"
	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/tools"
)

func TestCutUTF8(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"héllo", 2, "h"},  // inside é
		{"héllo", 3, "hé"}, // right after it
		{"€€", 5, "€"},     // inside the second
		{"😀x", 3, ""},      // inside a 4-byte rune
		{"abc", 10, "abc"}, // under the cap
		{"abc", 0, ""},     // nothing
		{"\xff\xff\xff\xff\xff", 4, "\xff\xff\xff\xff"}, // not UTF-8: cut where the cap says
	} {
		if got := cutUTF8(tc.s, tc.n); got != tc.want {
			t.Errorf("cutUTF8(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}

// The cut keeps the server's order and kinds: text after the cut goes,
// media and other blocks stay where they were, and the notices come last.
func TestCapResultOrder(t *testing.T) {
	res := tools.Result{Content: []tools.Content{
		{Type: tools.ContentText, Text: strings.Repeat("a", 1500)},
		{Type: tools.ContentImage, Data: make([]byte, 10)},
		{Type: tools.ContentText, Text: strings.Repeat("é", 400)}, // 800 bytes; 548 left: 274 runes
		{Type: tools.ContentText, Text: "gone"},
	}}
	capResult(&res, 2048, config.NoCap)
	var kinds []string
	for _, c := range res.Content {
		kinds = append(kinds, c.Type)
	}
	if strings.Join(kinds, ",") != "text,image,text,text" {
		t.Fatalf("blocks %v", kinds)
	}
	if c := res.Content[2].Text; len(c) != 548 || !utf8.ValidString(c) {
		t.Errorf("third block: %d bytes", len(c))
	}
	tr := res.Details[adapter.DetailTruncated].(tools.Truncation)
	if tr.TextShown != 2048 || tr.TextBytes != 2304 || tr.TextBlocksDropped != 1 || tr.MediaBytes != 10 || tr.MediaShown != 10 {
		t.Errorf("truncation %+v", tr)
	}
}

// A result under the caps costs no allocation: no copy, no details map.
func TestCapResultUnderCapsAllocatesNothing(t *testing.T) {
	res := tools.Result{Content: []tools.Content{
		{Type: tools.ContentText, Text: strings.Repeat("a", 4096)},
		{Type: tools.ContentImage, Data: make([]byte, 4096)},
	}, StructuredContent: []byte(`{"a":1}`)}
	text, media := config.Server{}.OutputCaps()
	allocs := testing.AllocsPerRun(1000, func() { capResult(&res, text, media) })
	if allocs != 0 || res.Details != nil {
		t.Errorf("%v allocations per result under the caps, details %v", allocs, res.Details)
	}
}

func BenchmarkCapResultUnderCaps(b *testing.B) {
	res := tools.Result{Content: []tools.Content{{Type: tools.ContentText, Text: "hello"}}}
	text, media := config.Server{}.OutputCaps()
	b.ReportAllocs()
	for b.Loop() {
		capResult(&res, text, media)
	}
}
