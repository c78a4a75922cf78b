package exampleserver

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The sized tool (Options.SizedTools) answers with as many bytes as it is
// asked for, in text, images, audio and structured content, so that a
// client's output caps can be tested on a result of any shape.

// maxSizedBytes bounds each part of a sized answer (a block, the
// structured content), below the 16 MiB frame the stdio transport takes.
const maxSizedBytes = 8 << 20

// maxSizedBlocks bounds how many blocks of each kind one answer has.
const maxSizedBlocks = 64

// maxSizedAnswer bounds the whole answer: its text, its media as base64
// (4/3 of their bytes) and its structured content together, so that with
// the JSON around them it stays below the 16 MiB frame (a larger answer
// would test the transport's bound, not the caps).
const maxSizedAnswer = 12 << 20

// sizedArgs are the arguments of the sized tool; each part is left out
// when its count or size is 0.
type sizedArgs struct {
	TextBytes  int    `json:"text_bytes,omitempty" jsonschema:"bytes of each text block (at most 8 MiB), rounded down to whole runes"`
	TextBlocks int    `json:"text_blocks,omitempty" jsonschema:"how many text blocks (default 1 when text_bytes is set, at most 64)"`
	Rune       string `json:"rune,omitempty" jsonschema:"the character the text repeats (default x; é or € make multibyte text)"`
	ImageBytes int    `json:"image_bytes,omitempty" jsonschema:"bytes of each image block's data (at most 8 MiB)"`
	Images     int    `json:"images,omitempty" jsonschema:"how many image blocks (at most 64)"`
	AudioBytes int    `json:"audio_bytes,omitempty" jsonschema:"bytes of each audio block's data (at most 8 MiB)"`
	Audios     int    `json:"audios,omitempty" jsonschema:"how many audio blocks (at most 64)"`
	// StructuredBytes makes structured content {"pad": "xxx…"} of about
	// that many bytes of JSON.
	StructuredBytes int `json:"structured_bytes,omitempty" jsonschema:"bytes of structured content, about (at most 8 MiB)"`
}

// SizedImageMIMEType and SizedAudioMIMEType are the MIME types of the
// sized tool's media blocks.
const (
	SizedImageMIMEType = "image/png"
	SizedAudioMIMEType = "audio/wav"
)

// addSizedTools registers the sized tool.
func addSizedTools(srv *mcp.Server) {
	mcp.AddTool(srv, &mcp.Tool{Name: "sized", Description: "Answers with text, image, audio and structured content of the sizes asked for."}, sized)
}

func sized(_ context.Context, _ *mcp.CallToolRequest, in sizedArgs) (*mcp.CallToolResult, any, error) {
	for _, n := range []int{in.TextBytes, in.ImageBytes, in.AudioBytes, in.StructuredBytes} {
		if n < 0 || n > maxSizedBytes {
			return nil, nil, fmt.Errorf("sizes must be between 0 and %d, got %d", maxSizedBytes, n)
		}
	}
	for _, n := range []int{in.TextBlocks, in.Images, in.Audios} {
		if n < 0 || n > maxSizedBlocks {
			return nil, nil, fmt.Errorf("counts must be between 0 and %d, got %d", maxSizedBlocks, n)
		}
	}
	textBlocks := in.TextBlocks
	if textBlocks == 0 && in.TextBytes > 0 {
		textBlocks = 1
	}
	total := textBlocks*in.TextBytes + (in.Images*in.ImageBytes+in.Audios*in.AudioBytes)*4/3 + in.StructuredBytes
	if total > maxSizedAnswer {
		return nil, nil, fmt.Errorf("the whole answer must be at most %d bytes (media counted as base64), got %d", maxSizedAnswer, total)
	}
	r := in.Rune
	if r == "" {
		r = "x"
	}
	if utf8.RuneCountInString(r) != 1 {
		return nil, nil, fmt.Errorf("rune must be one character, got %q", r)
	}
	res := &mcp.CallToolResult{Content: []mcp.Content{}}
	text := strings.Repeat(r, in.TextBytes/len(r))
	for range textBlocks {
		res.Content = append(res.Content, &mcp.TextContent{Text: text})
	}
	for range in.Images {
		res.Content = append(res.Content, &mcp.ImageContent{MIMEType: SizedImageMIMEType, Data: make([]byte, in.ImageBytes)})
	}
	for range in.Audios {
		res.Content = append(res.Content, &mcp.AudioContent{MIMEType: SizedAudioMIMEType, Data: make([]byte, in.AudioBytes)})
	}
	if in.StructuredBytes > 0 {
		const frame = len(`{"pad":""}`)
		res.StructuredContent = map[string]string{"pad": strings.Repeat("x", max(in.StructuredBytes-frame, 0))}
	}
	return res, nil, nil
}
