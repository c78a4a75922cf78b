package mcpconn

import (
	"errors"
	"testing"

	"github.com/openprogram/mcpvisor/tools"
)

// TestUnansweredCallLeavesNoTapEntry: a call the server never answers (it
// times out) leaves no pending entry in the wire tap, through CallTool as
// through CallToolJSON; one entry per such call would otherwise stay for
// the session's life.
func TestUnansweredCallLeavesNoTapEntry(t *testing.T) {
	c := dialProgress(t, 0)
	for _, structured := range []bool{true, false} {
		var err error
		args := map[string]any{"reports": 0, "period_ms": 1}
		if structured {
			_, _, err = c.CallToolJSON(t.Context(), "progress_silent", args)
		} else {
			_, err = c.CallTool(t.Context(), "progress_silent", args)
		}
		if !errors.Is(err, tools.ErrTimeout) {
			t.Fatalf("structured=%v: %v, want a timeout", structured, err)
		}
		c.tap.mu.Lock()
		n := len(c.tap.pending)
		c.tap.mu.Unlock()
		if n != 0 {
			t.Errorf("structured=%v: %d tap entries pending after a timed-out call, want 0", structured, n)
		}
	}
}
