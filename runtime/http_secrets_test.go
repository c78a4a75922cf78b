package runtime

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/status"
)

// TestHTTPSecretsNeverShown plants secrets in env, headers, the bearer
// token and the OAuth client secret, in the file and in requests (valid
// ones, invalid ones and one whose restart fails), and checks that no
// answer body, answer header, error text or log line ever holds one, while
// the answers do show that each secret is set.
func TestHTTPSecretsNeverShown(t *testing.T) {
	secrets := []string{
		"sk-env-planted-0001", "hdr-planted-secret-0002", "tok-planted-bearer-0003",
		"sk-posted-env-0004", "hdr-posted-0005", "tok-posted-0006", "cs-posted-0007",
		"sk-patched-env-0008", "sk-invalid-body-0009", "sk-failed-patch-0010", "sk-call-arg-0011",
		"hdr-patched-0012",
	}
	local := exampleServer("local")
	local.Env["API_KEY"] = secrets[0]
	remote := config.Server{Name: "remote", Type: config.TypeHTTP, URL: "http://127.0.0.1:1/mcp", Enabled: true, TimeoutSeconds: 2,
		Headers: map[string]string{"X-Api-Key": secrets[1]}, Auth: &config.Auth{Kind: config.AuthBearer, Token: secrets[2]}}
	rt := start(t, Options{}, local, remote)
	api := newAPI(t, rt)
	api.waitState("local", status.Ready)
	api.waitState("remote", status.Failed, status.Backoff, status.Ready)

	var answers []apiAnswer
	do := func(method, path, body string, code int) apiAnswer {
		t.Helper()
		a := api.do(method, path, body).want(t, code)
		answers = append(answers, a)
		return a
	}
	do("GET", "/api/mcp/servers", "", 200)
	do("GET", "/api/mcp/servers/local", "", 200)
	do("GET", "/api/mcp/servers/remote", "", 200)
	do("GET", "/api/mcp/tools", "", 200)
	do("GET", "/debug/actors", "", 200)
	do("GET", "/healthz", "", 200)

	// A POST with secrets answers the masked entry.
	posted := do("POST", "/api/mcp/servers", fmt.Sprintf(`{"name": "posted", "type": "http", "url": "http://127.0.0.1:1/mcp",
		"enabled": false, "headers": {"Authorization": %q}, "auth": {"kind": "oauth", "client_id": "cid", "client_secret": %q}}`,
		secrets[4], secrets[6]), 201)
	var e ServerEntry
	posted.decode(t, &e)
	if !e.Headers["Authorization"].HasValue || !e.Auth.HasClientSecret || e.Auth.ClientSecretMasked == "" {
		t.Errorf("posted entry does not show its secrets as set: %s", posted.body)
	}
	do("POST", "/api/mcp/servers", fmt.Sprintf(`{"name": "posted2", "type": "local", "command": ["/bin/true"], "enabled": false,
		"env": {"K": %q}}`, secrets[3]), 201)
	do("POST", "/api/mcp/servers", fmt.Sprintf(`{"name": "posted3", "type": "http", "url": "http://127.0.0.1:1/x", "enabled": false,
		"auth": {"kind": "bearer", "token": %q}}`, secrets[5]), 201)

	// PATCHes that work, that are invalid, and whose restart fails.
	do("PATCH", "/api/mcp/servers/local", fmt.Sprintf(`{"env": {"OTHER": %q}}`, secrets[7]), 200)
	do("PATCH", "/api/mcp/servers/remote", fmt.Sprintf(`{"headers": {"X-Other": %q}, "enabled": false}`, secrets[11]), 200)
	do("PATCH", "/api/mcp/servers/local", fmt.Sprintf(`{"env": {"K": %q}, "bogus": 1}`, secrets[8]), 400)
	do("PATCH", "/api/mcp/servers/local", fmt.Sprintf(`{"env": {"K": %q`, secrets[8]), 400)
	do("PATCH", "/api/mcp/servers/local", fmt.Sprintf(`{"env": {"K": %q}, "timeout_seconds": "x"}`, secrets[8]), 400)
	do("PATCH", "/api/mcp/servers/local", fmt.Sprintf(`{"env": {"A=B": %q}}`, secrets[8]), 400)
	do("POST", "/api/mcp/servers", fmt.Sprintf(`{"name": "bad", "type": "local", "env": {"K": %q}}`, secrets[8]), 400)
	do("POST", "/api/mcp/servers", fmt.Sprintf(`{"name": "bad", "type": "http", "url": "http://127.0.0.1:1/x", "auth": {"kind": "bearer", "token": %q, "client_secret": %q}}`, secrets[8], secrets[8]), 400)
	do("PATCH", "/api/mcp/servers/local", fmt.Sprintf(`{"env": {"K2": %q}, "command": ["/nonexistent/%s"]}`, secrets[9], "srv"), 502)
	api.waitState("local", status.Ready)
	do("POST", "/api/mcp/servers/remote/restart", "", 409) // disabled now

	// A call with a secret argument that is refused.
	do("POST", "/api/mcp/tools/local__echo/call", fmt.Sprintf(`{"arguments": {"text": %q}, "x": 1}`, secrets[10]), 400)
	do("POST", "/api/mcp/tools/local__echo/call", fmt.Sprintf(`{"arguments": [%q]}`, secrets[10]), 400)
	do("POST", "/api/mcp/tools/nope__echo/call", fmt.Sprintf(`{"arguments": {"text": %q}}`, secrets[10]), 404)

	// Everything once more, after all the edits.
	do("GET", "/api/mcp/servers", "", 200)
	for _, n := range []string{"local", "remote", "posted", "posted2", "posted3"} {
		do("GET", "/api/mcp/servers/"+n, "", 200)
	}
	do("GET", "/debug/actors", "", 200)
	do("POST", "/api/mcp/servers/local/restart", "", 200)

	for _, a := range answers {
		headers, _ := json.Marshal(a.header)
		for _, s := range secrets {
			if strings.Contains(string(a.body), s) || strings.Contains(string(headers), s) {
				t.Errorf("secret %q in an answer: %s", s, a.body)
			}
		}
	}
	logs := rt.logs.String()
	for _, s := range secrets {
		if strings.Contains(logs, s) {
			t.Errorf("secret %q in the logs", s)
		}
	}
	// The file does hold the ones that were saved (the test planted real
	// values), so their absence above means something.
	file := string(readConfig(t, rt))
	for _, i := range []int{0, 1, 2, 3, 4, 5, 6, 7, 11} {
		if !strings.Contains(file, secrets[i]) {
			t.Errorf("secret %d not saved in the file", i)
		}
	}
	for _, i := range []int{8, 9} {
		if strings.Contains(file, secrets[i]) {
			t.Errorf("secret %d of a refused request was saved", i)
		}
	}
	d := api.entry("local")
	if !d.Env["API_KEY"].HasValue || !d.Env["OTHER"].HasValue || d.Env["API_KEY"].Masked != config.Mask(secrets[0]) {
		t.Errorf("local env = %+v, want its secrets set and masked", d.Env)
	}
	r := api.entry("remote")
	if !r.Headers["X-Api-Key"].HasValue || !r.Headers["X-Other"].HasValue || !r.Auth.HasToken || r.Auth.Kind != "bearer" {
		t.Errorf("remote = %+v, want headers and token set", r)
	}
}
