package status

import (
	"testing"

	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/tools"
)

// Who the server is comes from SessionStarted and stays, marked by
// Ready false, while the server is not ready; a disable clears it.
func TestServerInfoOutlivesTheSession(t *testing.T) {
	f := newFeed(nil)
	f.apply(events.ServerAdded{Header: hdr("fs")})
	f.apply(state("fs", "starting"))
	info := &events.ServerInfo{Name: "fs-server", Version: "1.0", Icons: []tools.Icon{{Src: "https://x.example/i.png", Sizes: []string{"16x16"}}}}
	f.apply(events.SessionStarted{Header: hdr("fs"), PID: 7, ProtocolVersion: "2025-11-25", ServerInfo: info})
	f.apply(state("fs", "ready"))
	st, _ := f.b.Get("fs")
	if st.ServerInfo == nil || st.ServerInfo.Name != "fs-server" || st.ProtocolVersion != "2025-11-25" {
		t.Fatalf("ready status = %+v, want the session's server info and protocol", st)
	}
	st.ServerInfo.Icons[0].Sizes[0] = "changed by a reader"
	if again, _ := f.b.Get("fs"); again.ServerInfo.Icons[0].Sizes[0] != "16x16" {
		t.Errorf("a reader's change reached the board: %+v", again.ServerInfo.Icons)
	}

	f.apply(events.SessionLost{Header: hdr("fs"), Error: "EOF"})
	f.apply(state("fs", "backoff"))
	st, _ = f.b.Get("fs")
	if st.Ready || st.ServerInfo == nil || st.ServerInfo.Version != "1.0" || st.ProtocolVersion != "2025-11-25" || st.PID != 0 {
		t.Errorf("status in backoff = %+v, want the last known server info and protocol, not ready, no pid", st)
	}

	f.apply(state("fs", "disabled"))
	if st, _ = f.b.Get("fs"); st.ServerInfo != nil || st.ProtocolVersion != "" {
		t.Errorf("status when disabled = %+v, want no server info or protocol", st)
	}
}

// InstructionsChanged reaches the stream only when the text differs
// from what the board shows.
func TestInstructionsChangedOnlyWhenTheTextDoes(t *testing.T) {
	f := newFeed(nil)
	f.apply(events.ServerAdded{Header: hdr("fs")})
	f.apply(state("fs", "starting"))
	for i, step := range []struct {
		text string
		news bool
	}{
		{"", false},         // a first session without instructions
		{"use read", true},  // the first that has some
		{"use read", false}, // a reconnect with the same text
		{"use write", true}, // a new session with another text
		{"", true},          // one without: the text went away
	} {
		got := f.apply(events.InstructionsChanged{Header: hdr("fs"), Instructions: step.text})
		if (got != nil) != step.news {
			t.Errorf("step %d (%q): Apply returned %v, want news %v", i, step.text, got, step.news)
		}
		if st, _ := f.b.Get("fs"); st.Instructions != step.text {
			t.Errorf("step %d: status shows %q, want %q", i, st.Instructions, step.text)
		}
	}
}

// The board keeps its own copy of a session's server info: the event
// reached the host as well, and a host that changes its event (the
// pointer it carries) cannot change Status().
func TestServerInfoIsTheBoardsOwn(t *testing.T) {
	f := newFeed(nil)
	f.apply(events.ServerAdded{Header: hdr("fs")})
	f.apply(state("fs", "starting"))
	info := &events.ServerInfo{Name: "fs-server", Icons: []tools.Icon{{Src: "https://x.example/i.png", Sizes: []string{"16x16"}}}}
	f.apply(events.SessionStarted{Header: hdr("fs"), PID: 7, ServerInfo: info})
	info.Name, info.Icons[0].Sizes[0] = "changed by the host", "changed by the host"
	if st, _ := f.b.Get("fs"); st.ServerInfo == nil || st.ServerInfo.Name != "fs-server" || st.ServerInfo.Icons[0].Sizes[0] != "16x16" {
		t.Errorf("status = %+v: a change to the event reached the board", st.ServerInfo)
	}
}
