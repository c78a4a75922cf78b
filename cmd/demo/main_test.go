package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/internal/testutil"
)

var (
	demoBin string
	marker  = fmt.Sprintf("demo-test-%d", os.Getpid())
)

func TestMain(m *testing.M) { testutil.Main(m, &demoBin, marker) }

// demoCommand runs the demo binary with the marker in its environment, which
// the servers it starts inherit.
func demoCommand(args ...string) *exec.Cmd {
	cmd := exec.Command(demoBin, args...)
	cmd.Env = append(os.Environ(), testutil.MarkerEnv+"="+marker)
	return cmd
}

func TestTour(t *testing.T) {
	cmd := demoCommand()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := runBounded(t, cmd, time.Minute); err != nil {
		t.Fatalf("tour: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{
		"example__echo", "example__add", "example__image", "example__resource",
		`-> "hello from the host"`, `-> "42"`, "image image/png", `"[resource: demo://resource/1]"`,
		"[is_error]", "unknown tool: true",
		// prompts: listed with their arguments, greet rendered for Ada
		"\nprompts:\n", "example__greet", "args: name (required), style",
		`GetPrompt(example__greet, {"name":"Ada"}) -> 1 message(s)`, `user: "Please greet Ada."`,
		// resources: listed, the readme's first line, a templated note
		"\nresources:\n", "example__list_resources({}) -> demo://readme (text/markdown), template demo://notes/{id}",
		`example__read_resource({"uri":"demo://readme"}) -> `, `first line "# mcpvisor example server"`,
		`example__read_resource({"uri":"demo://notes/7"}) -> "note 7"`,
		// list changed: the added tool appears in the registry and answers
		"\nlist changed:\n", `example__change({"list":"tools"}) -> "added tool extra_1"`,
		"tools/list_changed: example__extra_1 registered", "(18 tools, was 17)",
		`example__extra_1({"text":"a tool that did not exist at startup"}) -> "a tool that did not exist at startup"`,
		// 11 tools of its own, change, and 4 resource and prompt tools
		"example  ready  true   17",
		"are gone", "killed the server process", "restarts=1", `-> "still here"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("tour output lacks %q:\n%s", want, out)
		}
	}
	// The tool list at startup has the change tool and the resource and
	// prompt tools, but not the tool the change adds later.
	_, listed, _ := strings.Cut(out, "\ntools:\n")
	listed, _, _ = strings.Cut(listed, "\ncalls:\n")
	for _, want := range []string{"example__change ", "example__list_resources ", "example__read_resource ", "example__list_prompts ", "example__get_prompt "} {
		if !strings.Contains(listed, want) {
			t.Errorf("the tour's tool list lacks %q:\n%s", want, listed)
		}
	}
	if strings.Contains(listed, "example__extra_1") {
		t.Errorf("the tour's tool list at startup already has example__extra_1:\n%s", listed)
	}
	if strings.Contains(out+stderr.String(), "demo-secret-value-1234") {
		t.Errorf("the demo's planted secret appears in its output")
	}
	if left := testutil.ProcessesWithMarker(marker); len(left) > 0 {
		t.Errorf("processes left after the tour: %v", left)
	}
}

// TestRunServesAPI runs `demo run` as a user would: the API on a free
// port printed on stdout, SIGHUP picking up a hand edit of the file, and
// SIGTERM stopping everything with exit status 0.
func TestRunServesAPI(t *testing.T) {
	dir := t.TempDir()
	ex := config.Server{Name: "ex", Type: config.TypeLocal, Command: []string{demoBin, "serve"}, Enabled: true}
	testutil.WriteConfig(t, dir, ex)
	cmd, base, logs := startRun(t, dir)

	get := func(path string, v any) int {
		t.Helper()
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		if ct := resp.Header.Get("Content-Type"); ct != "application/json" || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: Content-Type %q, nosniff %q", path, ct, resp.Header.Get("X-Content-Type-Options"))
		}
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			t.Fatalf("GET %s: decoding: %v", path, err)
		}
		return resp.StatusCode
	}
	var health map[string]string
	if code := get("/healthz", &health); code != http.StatusOK || health["status"] != "ok" {
		t.Fatalf("healthz: %d %v", code, health)
	}
	type server struct{ Name, State string }
	waitFor := func(name, state string) {
		t.Helper()
		awaitState(t, base, name, state, 30*time.Second)
		var list struct{ Servers []server }
		if code := get("/api/mcp/servers", &list); code != http.StatusOK {
			t.Fatalf("servers: %d", code)
		}
		if !slices.Contains(list.Servers, server{name, state}) {
			t.Fatalf("the servers list does not show %s %s: %+v\n%s", name, state, list.Servers, logs.String())
		}
	}
	waitFor("ex", "ready")

	// The debug routes are served beside the API, at the same paths as
	// before the two were split; the kill route only with -debug.
	var tree struct {
		Kind     string
		Children []struct{ Name string }
	}
	if code := get("/debug/actors", &tree); code != http.StatusOK || tree.Kind != "manager" || len(tree.Children) != 1 || tree.Children[0].Name != "ex" {
		t.Errorf("GET /debug/actors: %d %+v, want the manager with ex", code, tree)
	}
	var refused map[string]string
	if code := get("/debug/actors/kill", &refused); code != http.StatusNotFound {
		t.Errorf("kill route without -debug: %d %v, want 404", code, refused)
	}

	// A foreign Host is refused (DNS rebinding), on both.
	for _, path := range []string{"/api/mcp/servers", "/debug/actors"} {
		req, _ := http.NewRequest("GET", base+path, nil)
		req.Host = "attacker.example"
		if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusForbidden {
			t.Errorf("foreign Host on %s: %v %v, want 403", path, resp, err)
		} else {
			resp.Body.Close()
		}
	}

	// A hand edit, then SIGHUP: the added server appears and connects.
	added := ex
	added.Name = "added"
	testutil.WriteConfig(t, dir, ex, added)
	_ = cmd.Process.Signal(syscall.SIGHUP)
	waitFor("added", "ready")
	if !strings.Contains(logs.String(), "config reloaded") {
		t.Errorf("no reload line in the logs:\n%s", logs.String())
	}

	_ = cmd.Process.Signal(syscall.SIGTERM)
	if err := waitBounded(cmd, 30*time.Second); err != nil {
		t.Fatalf("demo run after SIGTERM: %v (want exit 0)\n%s", err, logs.String())
	}
	if left := testutil.ProcessesWithMarker(marker); len(left) > 0 {
		t.Fatalf("processes left after demo run stopped: %v", left)
	}
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Error("the API still answers after demo run exited")
	}
}

// startRun starts demo run on dir, listening on any free loopback port,
// and returns it with its API's base URL and its logs. A test that fails
// before it stopped demo run gets it killed.
func startRun(t *testing.T, dir string, flags ...string) (*exec.Cmd, string, *lockedBuffer) {
	t.Helper()
	cmd := demoCommand(append([]string{"run", "-state-dir", dir, "-listen", "127.0.0.1:0"}, flags...)...)
	base, logs := startCmd(t, cmd)
	return cmd, base, logs
}

// startCmd starts a demo run command built by the caller (its own folder,
// flags) and returns its API's base URL and its logs, as startRun does.
func startCmd(t *testing.T, cmd *exec.Cmd) (string, *lockedBuffer) {
	t.Helper()
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
	return readListenLine(t, stdout, logs), logs
}

// readListenLine reads the "listening on http://ADDR" line from stdout
// and returns the base URL.
func readListenLine(t *testing.T, stdout io.Reader, logs *lockedBuffer) string {
	t.Helper()
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			line <- sc.Text()
		}
		close(line)
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case l := <-line:
		base, ok := strings.CutPrefix(l, "listening on ")
		if !ok || !strings.HasPrefix(base, "http://127.0.0.1:") || strings.HasSuffix(base, ":0") {
			t.Fatalf("first stdout line %q, want listening on http://127.0.0.1:PORT\n%s", l, logs.String())
		}
		return base
	case <-time.After(30 * time.Second):
		t.Fatalf("no listening line on stdout after 30s\n%s", logs.String())
		return ""
	}
}

// SIGINT stops demo run as cleanly as SIGTERM, even before any server
// connected.
func TestRunStopsOnSIGINT(t *testing.T) {
	dir := t.TempDir()
	hung := config.Server{Name: "hung", Type: config.TypeLocal, Command: []string{demoBin, "serve", "-hang-initialize"}, Enabled: true}
	testutil.WriteConfig(t, dir, hung)
	cmd, base, logs := startRun(t, dir)
	resp, err := http.Get(base + "/healthz")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("healthz while the server hangs: %v %v", resp, err)
	}
	resp.Body.Close()
	_ = cmd.Process.Signal(syscall.SIGINT)
	if err := waitBounded(cmd, 30*time.Second); err != nil {
		t.Fatalf("demo run after SIGINT: %v\n%s", err, logs.String())
	}
	if left := testutil.ProcessesWithMarker(marker); len(left) > 0 {
		t.Fatalf("processes left: %v", left)
	}
}

func TestRunBadListen(t *testing.T) {
	out, err := demoCommand("run", "-state-dir", t.TempDir(), "-listen", "127.0.0.1:notaport").CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), "listening") {
		t.Fatalf("demo run with a bad -listen: %v\n%s", err, out)
	}
}

func TestRunNeedsStateDir(t *testing.T) {
	out, err := demoCommand("run").CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "-state-dir is required") {
		t.Fatalf("demo run without -state-dir: %v\n%s", err, out)
	}
}

func TestUnknownCommand(t *testing.T) {
	out, err := demoCommand("bogus").CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), `unknown command "bogus"`) {
		t.Fatalf("demo bogus: %v\n%s", err, out)
	}
}

func runBounded(t *testing.T, cmd *exec.Cmd, limit time.Duration) error {
	t.Helper()
	if err := cmd.Start(); err != nil {
		return err
	}
	return waitBounded(cmd, limit)
}

// waitBounded waits for cmd, killing it after limit.
func waitBounded(cmd *exec.Cmd, limit time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(limit):
		_ = cmd.Process.Kill()
		<-done
		return fmt.Errorf("still running after %s; killed", limit)
	}
}

// lockedBuffer collects output written from several goroutines.
type lockedBuffer = testutil.Buffer

// -startup-concurrency reaches the runtime: with 2, a server after one
// that never answers initialize connects meanwhile; a negative value is
// a usage error.
func TestRunStartupConcurrency(t *testing.T) {
	out, err := demoCommand("run", "-state-dir", t.TempDir(), "-startup-concurrency", "-1").CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "-startup-concurrency must not be negative") {
		t.Fatalf("demo run -startup-concurrency -1: %v\n%s", err, out)
	}

	dir := t.TempDir()
	env := map[string]string{testutil.MarkerEnv: marker}
	hung := config.Server{Name: "hung", Type: config.TypeLocal, Command: []string{demoBin, "serve", "-hang-initialize"}, Env: env, Enabled: true, TimeoutSeconds: 120}
	ex := config.Server{Name: "ex", Type: config.TypeLocal, Command: []string{demoBin, "serve"}, Env: env, Enabled: true}
	testutil.WriteConfig(t, dir, hung, ex)
	cmd, base, logs := startRun(t, dir, "-startup-concurrency", "2")
	awaitState(t, base, "ex", "ready", 30*time.Second)
	_ = cmd.Process.Signal(syscall.SIGTERM)
	if err := waitBounded(cmd, 30*time.Second); err != nil {
		t.Fatalf("demo run after SIGTERM: %v\n%s", err, logs.String())
	}
	if left := testutil.ProcessesWithMarker(marker); len(left) > 0 {
		t.Fatalf("processes left: %v", left)
	}
}
