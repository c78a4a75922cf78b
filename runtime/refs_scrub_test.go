package runtime

import (
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/openprogram/mcpvisor/config"
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

// A cwd that expands to a missing directory passes validation and fails
// at the connect, whose error quotes the expanded path: the connection's
// scrubber takes out the value a secret field shares with it.
func TestExpandedSecretScrubbedFromMissingCwd(t *testing.T) {
	bad := exampleServer("bad")
	bad.Cwd = "/nonexistent-mcpvisor/${REF_TOKEN}"
	bad.Env["TOKEN"] = "${REF_TOKEN}"
	rt := start(t, Options{LookupEnv: refLookup(nil)}, bad)
	all := rt.Subscribe(events.SubscribeOptions{From: 1, Buffer: 1 << 14})
	t.Cleanup(all.Close)
	st := rt.waitSettled(t, "bad")
	if st.State != status.Failed || st.ErrorKind != status.KindInvalidConfig || !strings.Contains(st.Error, "does not exist") {
		t.Fatalf("bad = %s %s %q, want failed/invalid_config: the cwd does not exist", st.State, st.ErrorKind, strings.ReplaceAll(st.Error, refSecret, "<REF SECRET>"))
	}
	stJSON, _ := json.Marshal(st)
	assertScrubbed(t, rt, []string{refSecret}, string(stJSON), eventsJSON(all))
}

// A reference in a URL's query, userinfo or path brings a secret into
// the URL that Go's HTTP errors quote: it is scrubbed from the status,
// the events and the logs; the host and port stay readable. The view of
// a literal key in the query is masked, in GET /api/mcp/servers too.
func TestURLSecretPartsScrubbed(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens: the connect is refused
	const literal = "URL-LITERAL-planted-4b7e19"
	servers := []config.Server{
		{Name: "q", Type: config.TypeHTTP, Enabled: true, URL: "http://" + addr + "/mcp?key=${REF_TOKEN}"},
		{Name: "u", Type: config.TypeHTTP, Enabled: true, URL: "http://${REF_TOKEN}@" + addr + "/mcp"},
		{Name: "p", Type: config.TypeHTTP, Enabled: true, URL: "http://" + addr + "/${REF_TOKEN}/mcp"},
		{Name: "l", Type: config.TypeHTTP, Enabled: true, URL: "http://" + addr + "/mcp?api_key=" + literal},
	}
	rt := start(t, Options{LookupEnv: refLookup(nil)}, servers...)
	all := rt.Subscribe(events.SubscribeOptions{From: 1, Buffer: 1 << 14})
	t.Cleanup(all.Close)
	var texts []string
	for _, s := range servers {
		st := rt.waitSettled(t, s.Name)
		if st.State == status.Ready || !strings.Contains(st.Error, addr) {
			t.Errorf("%s = %s %q, want a failed connect naming %s", s.Name, st.State, strings.ReplaceAll(st.Error, refSecret, "<REF SECRET>"), addr)
		}
		stJSON, _ := json.Marshal(st)
		texts = append(texts, string(stJSON))
	}
	a := newAPI(t, rt).do("GET", "/api/mcp/servers", "")
	if !strings.Contains(string(a.body), "api_key=****") || !strings.Contains(string(a.body), "key=${REF_TOKEN}") {
		t.Errorf("GET /api/mcp/servers: %s", strings.ReplaceAll(string(a.body), literal, "<LITERAL>"))
	}
	texts = append(texts, string(a.body), eventsJSON(all))
	assertScrubbed(t, rt, []string{refSecret, literal}, texts...)
}
