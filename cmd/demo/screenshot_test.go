package main

import (
	"bytes"
	"flag"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/runtime"
)

// screenshotPath is where TestConsoleScreenshot writes its PNG (`make
// screenshot`: docs/console.png); by default a temporary file.
var screenshotPath = flag.String("console-screenshot", "", "write the console's screenshot to this `file`")

// TestConsoleScreenshot takes a real screenshot of the console with
// servers in different states: ready (with a tool call's result), starting,
// retrying, failed and disabled.
func TestConsoleScreenshot(t *testing.T) {
	slow := exampleConfig("slow-start", nil)
	slow.Command = append(slow.Command, "-initialize-delay", "1m")
	slow.TimeoutSeconds = 120
	off := exampleConfig("paused", nil)
	off.Enabled = false
	lookup := func(name string) (string, bool) {
		if name == "GITHUB_TOKEN" {
			return "screenshot-token", true
		}
		return os.LookupEnv(name)
	}
	_, url, _ := consoleRuntime(t, runtime.Options{Home: t.TempDir(), LookupEnv: lookup},
		exampleConfig("example", map[string]string{"API_KEY": "screenshot-secret-value"}),
		config.Server{Name: "github", Type: config.TypeHTTP, Enabled: true, URL: "http://127.0.0.1:1/mcp",
			Headers: map[string]string{"Authorization": "Bearer ${GITHUB_TOKEN}"}},
		config.Server{Name: "broken", Type: config.TypeLocal, Enabled: true, Command: []string{"/nonexistent/mcp-server"}},
		off,
		slow, // last: startup connects one server at a time, in file order
	)
	tb := openTab(t, newBrowser(t), url)
	tb.waitJS("example ready", stateIs("example", "ready"))
	tb.waitJS("slow-start starting", stateIs("slow-start", "starting"))
	tb.waitJS("github retrying", onCard("github", `c.querySelector('[data-state]').textContent === 'backoff'`))
	tb.waitJS("broken failed", stateIs("broken", "failed"))
	tool := `article[data-server=example] details[data-tool=example__add]`
	tb.do(chromedp.Click(chromedp.CSS(`article[data-server=example] details.tools > summary`)),
		chromedp.Click(chromedp.CSS(tool+` > summary`)),
		chromedp.SendKeys(chromedp.CSS(tool+` input[name=a]`), "2"),
		chromedp.SendKeys(chromedp.CSS(tool+` input[name=b]`), "40"),
		chromedp.Click(chromedp.CSS(tool+` button[type=submit]`)))
	tb.waitJS("the result", sel(tool+` .result pre.text`, `e.textContent === '42'`))
	tb.do(chromedp.Click(chromedp.CSS(`article[data-server=example] details.stderr-box > summary`)))
	tb.do(chromedp.Evaluate[chromedp.Void](`document.activeElement.blur(); window.scrollTo(0, 0)`))
	data, err := chromedp.Run(tb.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if _, err := png.Decode(bytes.NewReader(data)); err != nil {
		t.Fatalf("the screenshot is not a PNG: %v", err)
	}
	path := *screenshotPath
	if path == "" {
		path = filepath.Join(t.TempDir(), "console.png")
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (%d bytes)", path, len(data))
	tb.noProblems()
}
