package binding

import (
	"fmt"
	"unicode/utf8"

	"github.com/openprogram/mcpvisor/adapter"
	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/tools"
)

// Output caps (G3): what one tool result may put in front of the model.
//
// maxText (max_output_bytes) bounds the bytes of the result's text blocks
// together, in order: the server's text and the lines the adapter wrote
// for embedded resources, resource links and unknown blocks (an embedded
// resource's own text never reaches the model, only its line). Past the
// cap the block that crosses it is cut on a UTF-8 rune boundary and the
// text blocks after it are dropped. The structured content counts on its
// own against the same cap, since a host hands the model either it or
// the text: a larger one is dropped whole (cutting JSON would only make
// it invalid), after the output schema check ran on all of it.
//
// maxMedia (max_media_bytes) bounds the bytes of the image and audio data
// together: a block that would take the total over the cap is dropped
// (a smaller one after it may still fit).
//
// Each cut adds a text block at the end saying what was left out and
// under which setting, and Details[adapter.DetailTruncated] holds the
// figures (a tools.Truncation). The notices do not count against the
// caps. Past maxResultBlocks blocks the rest are dropped too (counted in
// Truncation.BlocksDropped), whatever their size. A result under both
// caps and the block bound costs one pass over its blocks and
// allocates nothing.

// maxResultBlocks is the most content blocks of one result that reach the
// model, whatever the caps: the caps count bytes of text and media, and
// without it a result of many empty or one-byte blocks (each tens of
// bytes of JSON around its content) would pass them untouched.
const maxResultBlocks = 1024

// capResult cuts res to maxText and maxMedia (config.NoCap: no cap) and
// to maxResultBlocks.
func capResult(res *tools.Result, maxText, maxMedia int) { capResultFrom(res, maxText, maxMedia, nil) }

// capResultFrom is capResult for content read from resources: uris[i] is
// the URI block i came from, and the notices name the one the text cut
// fell in and those of media blocks left out, so that the model knows
// which resource it did not get whole.
func capResultFrom(res *tools.Result, maxText, maxMedia int, uris []string) {
	var text, media int
	for i := range res.Content {
		switch c := &res.Content[i]; c.Type {
		case tools.ContentText:
			text += len(c.Text)
		case tools.ContentImage, tools.ContentAudio:
			media += len(c.Data)
		}
	}
	overText := maxText != config.NoCap && text > maxText
	overStructured := maxText != config.NoCap && len(res.StructuredContent) > maxText
	overMedia := maxMedia != config.NoCap && media > maxMedia
	overBlocks := len(res.Content) > maxResultBlocks
	if !overText && !overStructured && !overMedia && !overBlocks {
		return
	}
	t := tools.Truncation{TextBytes: text, TextShown: text, MaxOutputBytes: maxText,
		MediaBytes: media, MediaShown: media, MaxMediaBytes: maxMedia}
	out := make([]tools.Content, 0, min(len(res.Content), maxResultBlocks)+4)
	textLeft, mediaLeft := maxText, maxMedia
	if overText {
		t.TextShown = 0
	}
	if overMedia {
		t.MediaShown = 0
	}
	var cutIn, mediaFrom []string // the URIs of the cut, for a read
	for i, c := range res.Content {
		if i >= maxResultBlocks {
			t.BlocksDropped++
			switch {
			case c.Type == tools.ContentText && !overText:
				t.TextShown -= len(c.Text)
			case (c.Type == tools.ContentImage || c.Type == tools.ContentAudio) && !overMedia:
				t.MediaShown -= len(c.Data)
			}
			continue
		}
		switch {
		case c.Type == tools.ContentText && overText:
			if textLeft <= 0 {
				t.TextBlocksDropped++ // after the cut: nothing of it reaches the model
				continue
			}
			if len(c.Text) > textLeft {
				c.Text, textLeft = cutUTF8(c.Text, textLeft), 0
				if i < len(uris) {
					cutIn = append(cutIn, uris[i])
				}
				if c.Text == "" {
					t.TextBlocksDropped++
					continue
				}
			} else {
				textLeft -= len(c.Text)
			}
			t.TextShown += len(c.Text)
		case (c.Type == tools.ContentImage || c.Type == tools.ContentAudio) && overMedia:
			if len(c.Data) > mediaLeft {
				t.MediaBlocksDropped++
				if i < len(uris) {
					mediaFrom = append(mediaFrom, uris[i])
				}
				continue
			}
			mediaLeft -= len(c.Data)
			t.MediaShown += len(c.Data)
		}
		out = append(out, c)
	}
	if overBlocks {
		out = append(out, notice(fmt.Sprintf("[content truncated: %d block(s) past the first %d left out]",
			t.BlocksDropped, maxResultBlocks)))
	}
	if overText {
		out = append(out, notice(fmt.Sprintf("[output truncated%s: %d of %d bytes of text shown; max_output_bytes=%d]",
			fromResources(cutIn), t.TextShown, t.TextBytes, maxText)))
	}
	if overMedia {
		out = append(out, notice(fmt.Sprintf("[media truncated%s: %d image/audio block(s) left out, %d of %d bytes shown; max_media_bytes=%d]",
			fromResources(mediaFrom), t.MediaBlocksDropped, t.MediaShown, t.MediaBytes, maxMedia)))
	}
	if overStructured {
		t.StructuredContentDropped = len(res.StructuredContent)
		res.StructuredContent = nil
		out = append(out, notice(fmt.Sprintf("[structured content left out: %d bytes; max_output_bytes=%d]",
			t.StructuredContentDropped, maxText)))
	}
	res.Content = out
	if res.Details == nil {
		res.Details = map[string]any{}
	}
	res.Details[adapter.DetailTruncated] = t
}

// fromResources is the part of a notice naming the resources uris (none:
// ""): the first, at most maxNoticeURIBytes of it, and how many more.
func fromResources(uris []string) string {
	if len(uris) == 0 {
		return ""
	}
	s := " (resource " + cutUTF8(uris[0], maxNoticeURIBytes)
	if len(uris) > 1 {
		s += fmt.Sprintf(" and %d more", len(uris)-1)
	}
	return s + ")"
}

// maxNoticeURIBytes bounds a URI in a notice: the server chose it.
const maxNoticeURIBytes = 256

func notice(s string) tools.Content { return tools.Content{Type: tools.ContentText, Text: s} }

// cutUTF8 returns the longest prefix of s of at most n bytes that does not
// end inside a rune (n <= 0 gives "").
func cutUTF8(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if n >= len(s) {
		return s
	}
	i := n
	for i > 0 && n-i < utf8.UTFMax && !utf8.RuneStart(s[i]) {
		i--
	}
	if !utf8.RuneStart(s[i]) {
		i = n // not UTF-8 around here: cut where the cap says
	}
	return s[:i]
}
