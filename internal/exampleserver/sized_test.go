package exampleserver

import (
	"strings"
	"testing"
	"time"
)

// Each part of a sized answer is bounded, and so is the whole: 64 text
// blocks of 8 MiB would be half a gigabyte, far past the 16 MiB frame.
func TestSizedBoundsTheWholeAnswer(t *testing.T) {
	cs := connectInMemory(t, Options{SizedTools: true})
	for _, args := range []map[string]any{
		{"text_bytes": 8 << 20, "text_blocks": 2},
		{"images": 2, "image_bytes": 5 << 20},
		{"text_bytes": 6 << 20, "structured_bytes": 7 << 20},
	} {
		res := callToolWithin(t, cs, 2*time.Minute, "sized", args)
		if !res.IsError || !strings.Contains(onlyText(t, res), "whole answer") {
			t.Errorf("sized %v: %+v, want an error about the whole answer", args, res.Content)
		}
	}
	res := callToolWithin(t, cs, 2*time.Minute, "sized", map[string]any{"text_bytes": 1 << 20, "text_blocks": 8, "images": 1, "image_bytes": 1 << 20})
	if res.IsError || len(res.Content) != 9 {
		t.Errorf("a 9 MiB answer: error %v, %d blocks", res.IsError, len(res.Content))
	}
}
