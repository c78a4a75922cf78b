package runtime

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/status"
)

// A value that fails validation only once expanded may be quoted by the
// error (a relative cwd is). When its variable is also a secret field's,
// the expanded value (set only through Options.LookupEnv) is scrubbed, in
// every encoding, from the status, the events, the logs and a PATCH's
// answer, though the file holds only references.
func TestExpandedSecretScrubbedFromExpandErrors(t *testing.T) {
	const quoted = `REF-quoted"secret\planted-81c2`
	bad := exampleServer("bad")
	bad.Cwd = "${REF_TOKEN}" // relative: the error quotes it
	bad.Env["TOKEN"] = "Bearer ${REF_TOKEN}"
	rt := start(t, Options{LookupEnv: refLookup(map[string]string{"REF_QUOTED": quoted})}, bad, exampleServer("ok"))
	all := rt.Subscribe(events.SubscribeOptions{From: 1, Buffer: 1 << 14})
	t.Cleanup(all.Close)
	st := rt.waitSettled(t, "bad")
	if st.State != status.Failed || st.ErrorKind != status.KindInvalidConfig || !strings.Contains(st.Error, "cwd") ||
		!strings.Contains(st.Error, "[redacted]") {
		t.Fatalf("bad = %s %s %q, want failed/invalid_config at cwd with the value scrubbed", st.State, st.ErrorKind, strings.ReplaceAll(st.Error, refSecret, "<REF SECRET>"))
	}
	rt.waitReady(t, "ok")
	api := newAPI(t, rt)
	a := api.do("PATCH", "/api/mcp/servers/ok", `{"cwd": "${REF_QUOTED}", "headers": {}, "env": {"K": "${REF_QUOTED}"}}`)
	if a.code != http.StatusBadGateway || !strings.Contains(string(a.body), "cwd") {
		t.Errorf("PATCH to a relative expanded cwd: %d %q", a.code, strings.ReplaceAll(string(a.body), quoted, "<QUOTED SECRET>"))
	}
	rt.waitReady(t, "ok")
	stJSON, _ := json.Marshal(st)
	assertScrubbed(t, rt, []string{refSecret, quoted}, string(a.body), string(stJSON), eventsJSON(all))
}
