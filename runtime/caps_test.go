package runtime

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/openprogram/mcpvisor/adapter"
	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/status"
	"github.com/openprogram/mcpvisor/tools"
)

// truncationOf returns the result's Details["truncated"], false if none.
func truncationOf(t *testing.T, res tools.Result) (tools.Truncation, bool) {
	t.Helper()
	v, ok := res.Details[adapter.DetailTruncated]
	if !ok {
		return tools.Truncation{}, false
	}
	tr, ok := v.(tools.Truncation)
	if !ok {
		t.Fatalf("details.truncated is a %T", v)
	}
	return tr, true
}

// textOf sums the bytes of res's text blocks but the last (the notice).
func textOf(res tools.Result) (n int, blocks int) {
	for _, c := range res.Content[:len(res.Content)-1] {
		if c.Type == tools.ContentText {
			n += len(c.Text)
			blocks++
		}
	}
	return n, blocks
}

// Output caps (G3) over a real subprocess: the default text cap (256
// KiB) cuts a larger text and says so in the text the model sees and in
// Details, over Go and HTTP; a result under the caps is untouched.
func TestOutputCapDefaults(t *testing.T) {
	rt := start(t, Options{}, exampleServer("ex", "-sized-tools"))
	rt.waitReady(t, "ex")

	small := mustCall(t, rt, "ex__sized", map[string]any{"text_bytes": 1000, "images": 1, "image_bytes": 1000})
	if _, cut := truncationOf(t, small); cut || len(small.Content) != 2 || len(small.Content[0].Text) != 1000 {
		t.Errorf("a small result was changed: %d blocks, details %v", len(small.Content), small.Details)
	}

	const total = 300 << 10
	res := mustCall(t, rt, "ex__sized", map[string]any{"text_bytes": total})
	tr, cut := truncationOf(t, res)
	want := tools.Truncation{TextBytes: total, TextShown: config.DefaultMaxOutputBytes, MaxOutputBytes: config.DefaultMaxOutputBytes,
		MaxMediaBytes: config.DefaultMaxMediaBytes}
	if !cut || tr != want {
		t.Fatalf("details.truncated = %+v (%v), want %+v", tr, cut, want)
	}
	if n, _ := textOf(res); n != config.DefaultMaxOutputBytes {
		t.Errorf("%d bytes of text shown, want %d", n, config.DefaultMaxOutputBytes)
	}
	notice := res.Content[len(res.Content)-1].Text
	wantNotice := fmt.Sprintf("[output truncated: %d of %d bytes of text shown; max_output_bytes=%d]", config.DefaultMaxOutputBytes, total, config.DefaultMaxOutputBytes)
	if notice != wantNotice {
		t.Errorf("notice %q, want %q", notice, wantNotice)
	}

	api := newAPI(t, rt)
	viaHTTP, _ := callOverHTTP(t, api, "ex__sized", fmt.Sprintf(`{"text_bytes":%d}`, total))
	var got tools.Truncation
	if err := json.Unmarshal(viaHTTP.Details[adapter.DetailTruncated], &got); err != nil || got != want {
		t.Errorf("over HTTP: details.truncated = %s (%v), want %+v", viaHTTP.Details[adapter.DetailTruncated], err, want)
	}
	if last := viaHTTP.Content[len(viaHTTP.Content)-1].Text; last != wantNotice {
		t.Errorf("over HTTP: last block %q", last)
	}
}

// Per-server caps: text is cut on a rune boundary across blocks (the
// blocks past the cut dropped), media blocks that do not fit are dropped
// with a notice, structured content over the text cap is left out (after
// its check) with a notice; -1 lifts each cap.
func TestOutputCapsPerServer(t *testing.T) {
	capped := exampleServer("capped", "-sized-tools")
	capped.MaxOutputBytes, capped.MaxMediaBytes = 2048, 4096
	uncapped := exampleServer("uncapped", "-sized-tools")
	uncapped.MaxOutputBytes, uncapped.MaxMediaBytes = config.NoCap, config.NoCap
	rt := start(t, Options{}, capped, uncapped)
	rt.waitReady(t, "capped")
	rt.waitReady(t, "uncapped")

	// "€" is 3 bytes: 2048 falls inside the 683rd, so 682 whole runes.
	res := mustCall(t, rt, "capped__sized", map[string]any{"text_bytes": 3000, "rune": "€"})
	if tr, _ := truncationOf(t, res); tr.TextShown != 2046 || tr.TextBytes != 3000 || tr.MaxOutputBytes != 2048 {
		t.Errorf("multibyte cut: %+v", tr)
	}
	if text := res.Content[0].Text; len(text) != 2046 || !utf8.ValidString(text) || strings.Trim(text, "€") != "" {
		t.Errorf("multibyte cut: %d bytes, valid UTF-8 %v", len(text), utf8.ValidString(text))
	}

	// Four blocks of 1000: two whole, 48 bytes of the third, the fourth
	// dropped.
	res = mustCall(t, rt, "capped__sized", map[string]any{"text_bytes": 1000, "text_blocks": 4})
	if n, blocks := textOf(res); n != 2048 || blocks != 3 {
		t.Errorf("blocks: %d bytes in %d blocks, want 2048 in 3", n, blocks)
	}
	if tr, _ := truncationOf(t, res); tr.TextBlocksDropped != 1 || tr.TextShown != 2048 || tr.TextBytes != 4000 {
		t.Errorf("blocks: %+v", tr)
	}

	// Three images of 2000 bytes under a 4096 cap: two fit.
	res = mustCall(t, rt, "capped__sized", map[string]any{"images": 3, "image_bytes": 2000})
	images := 0
	for _, c := range res.Content {
		if c.Type == tools.ContentImage {
			images++
		}
	}
	tr, _ := truncationOf(t, res)
	if images != 2 || tr.MediaBlocksDropped != 1 || tr.MediaShown != 4000 || tr.MediaBytes != 6000 || tr.MaxMediaBytes != 4096 {
		t.Errorf("media: %d images, %+v", images, tr)
	}
	if last := res.Content[len(res.Content)-1]; last.Type != tools.ContentText || !strings.Contains(last.Text, "max_media_bytes=4096") {
		t.Errorf("media notice: %+v", last)
	}
	if tr.TextShown != tr.TextBytes {
		t.Errorf("the media cut counted the notice as text: %+v", tr)
	}

	res = mustCall(t, rt, "capped__sized", map[string]any{"structured_bytes": 5000})
	tr, _ = truncationOf(t, res)
	if res.StructuredContent != nil || tr.StructuredContentDropped != 5000 || res.IsError {
		t.Errorf("structured: %d bytes kept, %+v, is_error %v", len(res.StructuredContent), tr, res.IsError)
	}
	if last := res.Content[len(res.Content)-1].Text; !strings.Contains(last, "structured content left out: 5000 bytes") {
		t.Errorf("structured notice: %q", last)
	}

	// -1: nothing is cut, however large.
	res = mustCall(t, rt, "uncapped__sized", map[string]any{"text_bytes": 300 << 10, "images": 1, "image_bytes": 6 << 20, "structured_bytes": 300 << 10})
	if _, cut := truncationOf(t, res); cut || len(res.Content) != 2 || len(res.Content[0].Text) != 300<<10 ||
		len(res.Content[1].Data) != 6<<20 || len(res.StructuredContent) != 300<<10 {
		t.Errorf("uncapped: %d blocks, details %v", len(res.Content), res.Details)
	}
}

// A PATCH of max_output_bytes applies to the next call without a restart.
func TestOutputCapPatchInPlace(t *testing.T) {
	rt := start(t, Options{}, exampleServer("ex", "-sized-tools"))
	before := rt.waitReady(t, "ex")
	if _, cut := truncationOf(t, mustCall(t, rt, "ex__sized", map[string]any{"text_bytes": 4096})); cut {
		t.Fatal("4 KiB cut under the default cap")
	}
	newAPI(t, rt).do("PATCH", "/api/mcp/servers/ex", `{"max_output_bytes":2048}`).want(t, http.StatusOK)
	tr, cut := truncationOf(t, mustCall(t, rt, "ex__sized", map[string]any{"text_bytes": 4096}))
	if !cut || tr.TextShown != 2048 {
		t.Errorf("after the PATCH: %+v (%v)", tr, cut)
	}
	if st := mustStatus(t, rt, "ex"); st.PID != before.PID || st.Restarts != 0 || st.State != status.Ready {
		t.Errorf("the PATCH restarted the server: %+v", st)
	}
}
