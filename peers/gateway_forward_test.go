//go:build unix

package peers_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/openprogram/mcpvisor/internal/testutil"
)

// Sampling and elicitation that server-everything asks during a call
// through the gateway reach the TypeScript SDK client's handlers (it
// declared both capabilities), and their answers come back into the
// server's tool result; over stdio (demo gateway) and Streamable HTTP
// (demo run -mcp-listen, where the question goes on the call's stream).
func TestGatewayTypeScriptSamplingElicitation(t *testing.T) {
	const (
		prompt       = "peers-prompt-31"
		samplingText = "an answer of the TypeScript client"
		elicitName   = "TS Peer"
	)
	content, _ := json.Marshal(map[string]any{"name": elicitName, "check": true})
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			srv, keep := everythingServer(t, "stdio")
			dir := t.TempDir()
			testutil.WriteConfig(t, dir, srv)
			t.Cleanup(func() { noProcessesLeft(t, keep) })
			env := []string{"GW_CAPS=sampling,elicitation", "GW_SAMPLING_TEXT=" + samplingText, "GW_ELICIT_CONTENT=" + string(content)}
			if transport == "stdio" {
				command, _ := json.Marshal([]string{demoBin, "gateway", "-state-dir", dir, "-v"})
				env = append(env, "GW_TRANSPORT=stdio", "GW_COMMAND="+string(command))
			} else {
				run := startDemoRun(t, keep, "-state-dir", dir, "-listen", "127.0.0.1:0", "-v", "-mcp-listen", "127.0.0.1:0")
				env = append(env, "GW_TRANSPORT=http", "GW_URL="+run.mcpURL)
			}
			c := startTSClient(t, env...)
			c.awaitTools(t, []string{"everything__trigger-sampling-request", "everything__trigger-elicitation-request"})

			since := c.eventCount()
			res := c.call(t, "everything__trigger-sampling-request", map[string]any{"prompt": prompt, "maxTokens": 20})
			asked := c.eventsSince(c.waitEvent(t, since, "sampling", func(l tsLine) bool { return l.Event == "sampling" }))[0]
			if !strings.Contains(string(asked.Raw), prompt) {
				t.Errorf("the client's sampling handler got %s, want the server's request quoting %q", asked.Raw, prompt)
			}
			if !strings.Contains(res.text(), samplingText) {
				t.Errorf("trigger-sampling-request = %q, want the client's answer %q in it", res.text(), samplingText)
			}

			since = c.eventCount()
			res = c.call(t, "everything__trigger-elicitation-request", map[string]any{})
			c.waitEvent(t, since, "elicitation", func(l tsLine) bool { return l.Event == "elicitation" })
			if !strings.Contains(res.text(), "- Name: "+elicitName) {
				t.Errorf("trigger-elicitation-request = %q, want the client's accepted name %q in it", res.text(), elicitName)
			}
		})
	}
}
