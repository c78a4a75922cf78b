package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/internal/testutil"
)

// demo run -otel stdout,prometheus: a tool call through the management API reaches
// stdout as one JSON object for its span, whose trace and span ids are the
// traceparent the server received in _meta (its meta tool echoes it),
// and an echo's;
// stdout holds the listening line, then only JSON objects, a metric batch
// among them (flushed at shutdown), one with the servers gauge; nothing of the arguments is in any.
// With prometheus beside it, GET /metrics has the metrics as text.
func TestRunOTelStdout(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteConfig(t, dir, config.Server{Name: "ex", Type: config.TypeLocal, Command: []string{demoBin, "serve", "-progress-tools"},
		Env: map[string]string{testutil.MarkerEnv: marker}, Enabled: true})
	cmd := demoCommand("run", "-state-dir", dir, "-listen", "127.0.0.1:0", "-otel", "stdout,prometheus")
	logs := &lockedBuffer{}
	cmd.Stderr = logs
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	lines := make(chan string, 1024)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var base string
	select {
	case l := <-lines:
		var ok bool
		if base, ok = strings.CutPrefix(l, "listening on "); !ok {
			t.Fatalf("first stdout line %q\n%s", l, logs.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("no listening line\n%s", logs.String())
	}
	awaitState(t, base, "ex", "ready", 30*time.Second)
	resp, err := http.Post(base+"/api/mcp/tools/ex__meta/call", "application/json", strings.NewReader(`{"arguments":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Content []struct{ Text string }
	}
	err = json.NewDecoder(resp.Body).Decode(&res)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || len(res.Content) != 1 {
		t.Fatalf("calling meta: %d %+v %v", resp.StatusCode, res, err)
	}
	var meta struct{ Traceparent string }
	if err := json.Unmarshal([]byte(res.Content[0].Text), &meta); err != nil || meta.Traceparent == "" {
		t.Fatalf("the server saw _meta %s (%v), want a traceparent", res.Content[0].Text, err)
	}
	resp, err = http.Post(base+"/api/mcp/tools/ex__echo/call", "application/json", strings.NewReader(`{"arguments":{"text":"`+marker+`"}}`))
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("calling echo: %v %v", resp, err)
	}
	resp.Body.Close()

	// -otel prometheus: the same metrics in the text format, at /metrics
	// of the API's listener, for a loopback Host only.
	resp, err = http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	text, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`mcpvisor_calls_total{`, `mcp_client_operation_duration_seconds_bucket{`, `mcpvisor_servers{`, `mcpvisor_server_state="ready"`} {
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(text), want) {
			t.Errorf("GET /metrics: %d, no %s in:\n%s", resp.StatusCode, want, text)
		}
	}
	if strings.Contains(string(text), marker) {
		t.Error("/metrics holds the arguments' marker")
	}
	req, _ := http.NewRequest("GET", base+"/metrics", nil)
	req.Host = "attacker.example"
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("GET /metrics with a foreign Host: %v %v, want 403", resp, err)
	} else {
		resp.Body.Close()
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	if err := waitBounded(cmd, 30*time.Second); err != nil {
		t.Fatalf("demo run after SIGTERM: %v\n%s", err, logs.String())
	}

	var spans, echoes, batches, gauges int
	for l := range lines {
		if strings.Contains(l, marker) {
			t.Errorf("stdout holds the arguments' marker: %s", l)
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal([]byte(l), &obj); err != nil {
			t.Errorf("stdout line is not one JSON object: %q", l)
			continue
		}
		if _, ok := obj["ScopeMetrics"]; ok {
			batches++
			if strings.Contains(l, `"mcpvisor.servers"`) {
				gauges++
			}
			if !strings.Contains(l, `"mcpvisor.calls"`) || !strings.Contains(l, `"mcp.client.operation.duration"`) {
				t.Errorf("a metric batch without the call metrics: %s", l)
			}
			continue
		}
		var span struct {
			Name        string
			SpanKind    int
			SpanContext struct{ TraceID, SpanID string }
			Attributes  []struct {
				Key   string
				Value struct{ Value any }
			}
		}
		if err := json.Unmarshal([]byte(l), &span); err != nil || span.Name == "" {
			t.Errorf("stdout line is neither a span nor a metric batch: %s", l)
			continue
		}
		if span.Name == "tools/call echo" {
			echoes++
		}
		if span.Name != "tools/call meta" {
			continue
		}
		spans++
		if want := "00-" + span.SpanContext.TraceID + "-" + span.SpanContext.SpanID + "-01"; meta.Traceparent != want {
			t.Errorf("the server saw traceparent %s, the span is %s", meta.Traceparent, want)
		}
		attrs := map[string]any{}
		for _, a := range span.Attributes {
			attrs[a.Key] = a.Value.Value
		}
		if attrs["mcpvisor.server.name"] != "ex" || attrs["mcp.method.name"] != "tools/call" || attrs["mcpvisor.outcome"] != "ok" {
			t.Errorf("span attributes %v", attrs)
		}
	}
	if gauges == 0 {
		t.Errorf("no metric batch on stdout has mcpvisor.servers (%d batches)", batches)
	}
	if spans != 1 || echoes != 1 || batches == 0 {
		t.Errorf("%d spans of the meta call, %d of the echo and %d metric batches on stdout, want 1, 1 and at least 1\n%s", spans, echoes, batches, logs.String())
	}
}
