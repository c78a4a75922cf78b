//go:build unix

package peers_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/prompts"
	"github.com/openprogram/mcpvisor/runtime"
	"github.com/openprogram/mcpvisor/status"
	"github.com/openprogram/mcpvisor/tools"
)

const (
	projectRootURI  = "file:///tmp/project"
	projectRootName = "project"
	// promptly bounds what must be an immediate answer (a refusal, a
	// decline); calls themselves are bounded by callTimeout.
	promptly = 5 * time.Second
	// logWait bounds the wait for a server's log notification.
	logWait = 10 * time.Second
	// simulatedLogWait bounds the wait for server-everything's first
	// simulated log: it sends one at once and one every 5 s, each at a
	// random one of the eight MCP levels, and drops a debug one at our
	// level info. 10 s gave three draws (all debug 1 in 512, but the third
	// lands on the bound: in effect 1 in 64 per transport, seen in CI);
	// 30 s gives seven (1 in 2 million).
	simulatedLogWait = 30 * time.Second
	// settleQuiet is how long the registry must stay unchanged to count as
	// settled after the list_changed burst.
	settleQuiet = 300 * time.Millisecond
)

// featureTools are the registry names of every tool server-everything
// offers a client that declares sampling, form elicitation and roots, as
// the runtime always does (whether or not the host configured them), plus
// the runtime's resource and prompt tools for the server. The tools that
// need the tasks capability (trigger-*-async) or URL elicitation
// (trigger-url-elicitation) are not among them.
var featureTools = append(slices.Clone(alwaysTools),
	"everything__get-roots-list",
	"everything__simulate-research-query",
	"everything__trigger-elicitation-request",
	"everything__trigger-sampling-request",
	"everything__list_resources",
	"everything__read_resource",
	"everything__list_prompts",
	"everything__get_prompt",
)

// everythingPrompts are server-everything's four prompts in the registry,
// sorted, with their titles and arguments as the server lists them (its
// optional "state" argument comes without a description: zod's
// .describe() sits inside .optional() there).
var everythingPrompts = []struct {
	name, title string
	args        []prompts.Argument
}{
	{"everything__args-prompt", "Arguments Prompt", []prompts.Argument{
		{Name: "city", Description: "Name of the city", Required: true},
		{Name: "state"},
	}},
	{"everything__completable-prompt", "Team Management", []prompts.Argument{
		{Name: "department", Description: "Choose the department.", Required: true},
		{Name: "name", Description: "Choose a team member to lead the selected department.", Required: true},
	}},
	{"everything__resource-prompt", "Resource Prompt", []prompts.Argument{
		{Name: "resourceType", Description: "Type of resource to fetch", Required: true},
		{Name: "resourceId", Description: "ID of the text resource to fetch", Required: true},
	}},
	{"everything__simple-prompt", "Simple Prompt", nil},
}

// fakeModel is a host model for Options.Sample: it answers every request
// with text and records who asked what.
type fakeModel struct {
	text  string
	mu    sync.Mutex
	calls []sampleCall
}

type sampleCall struct {
	server       string
	messages     []string // each message's role and text
	systemPrompt string
	maxTokens    int64
}

func (m *fakeModel) sample(_ context.Context, req runtime.SamplingRequest) (runtime.SamplingResult, error) {
	call := sampleCall{server: req.Server, systemPrompt: req.SystemPrompt, maxTokens: req.MaxTokens}
	for _, msg := range req.Messages {
		call.messages = append(call.messages, msg.Role+": "+msg.Content.Text)
	}
	m.mu.Lock()
	m.calls = append(m.calls, call)
	m.mu.Unlock()
	return runtime.SamplingResult{Model: "fake-model", Text: m.text, StopReason: "endTurn"}, nil
}

func (m *fakeModel) recorded() []sampleCall {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.calls)
}

// fakeUser is a host user for Options.Elicit: it accepts every request
// with content and records who asked what.
type fakeUser struct {
	content map[string]any
	mu      sync.Mutex
	calls   []elicitCall
}

type elicitCall struct {
	server, message string
	schema          bool // the request carried a requested schema
}

func (u *fakeUser) elicit(_ context.Context, req runtime.ElicitationRequest) (runtime.ElicitationResult, error) {
	call := elicitCall{server: req.Server, message: req.Message, schema: len(req.Schema) > 0}
	u.mu.Lock()
	u.calls = append(u.calls, call)
	u.mu.Unlock()
	return runtime.ElicitationResult{Action: "accept", Content: u.content}, nil
}

func (u *fakeUser) recorded() []elicitCall {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Clone(u.calls)
}

// The runtime's client features against server-everything on every
// transport: prompts (registry and tools), resources, sampling, progress,
// roots, server logs, list_changed and elicitation. Each transport has two
// runtimes on the same server: "host" with Options.Sample, Elicit and
// Roots set, and "bare" with none of them.
func TestEverythingFeatures(t *testing.T) {
	for _, transport := range []string{"stdio", "sse", "streamableHttp"} {
		t.Run(transport, func(t *testing.T) {
			srv, keep := everythingServer(t, transport)
			model := &fakeModel{text: "fake model says: the sky is green over " + transport}
			user := &fakeUser{content: map[string]any{"name": "Ada Lovelace", "check": true, "integer": 7}}
			host := startRuntimeWith(t, keep, runtime.Options{
				Sample: model.sample,
				Elicit: user.elicit,
				Roots:  []runtime.Root{{URI: projectRootURI, Name: projectRootName}},
			}, srv)
			hostStatus := host.waitReady(t, "everything")
			// The bare runtime is shut down first (cleanups run last in,
			// first out), while the host's stdio server still runs.
			keepBare := keep
			if hostStatus.PID > 0 {
				keepBare = append(slices.Clone(keep), hostStatus.PID)
			}
			bare := startRuntime(t, keepBare, srv)
			host.waitTools(t, featureTools)

			t.Run("list_changed", func(t *testing.T) { checkToolList(t, host) })
			t.Run("prompts", func(t *testing.T) { checkPrompts(t, host) })
			t.Run("prompt_tools", func(t *testing.T) { checkPromptTools(t, host) })
			t.Run("resource_tools", func(t *testing.T) { checkResourceTools(t, host) })
			t.Run("listing_metadata", func(t *testing.T) { checkListingMetadata(t, host) })
			t.Run("sampling", func(t *testing.T) { checkSampling(t, host, model) })
			t.Run("progress", func(t *testing.T) { checkProgress(t, host) })
			t.Run("roots", func(t *testing.T) { checkRoots(t, host) })
			t.Run("logging", func(t *testing.T) { checkLogging(t, host) })
			t.Run("resources_list_changed", func(t *testing.T) { checkGzipResource(t, host) })
			t.Run("elicitation", func(t *testing.T) { checkElicitation(t, host, user) })

			bare.waitReady(t, "everything")
			bare.waitTools(t, featureTools)
			t.Run("bare/sampling_not_configured", func(t *testing.T) { checkSamplingNotConfigured(t, bare) })
			t.Run("bare/elicitation_declined", func(t *testing.T) { checkElicitationDeclined(t, bare) })
			t.Run("bare/no_roots", func(t *testing.T) { checkNoRoots(t, bare) })

			// Nothing above broke a session.
			for name, rt := range map[string]*testRuntime{"host": host, "bare": bare} {
				if s := serverStatus(t, rt, "everything"); s.State != status.Ready || s.Restarts != 0 {
					t.Errorf("%s runtime: after the checks the server is %s with %d restarts, want ready with 0: %+v", name, s.State, s.Restarts, s)
				}
			}
		})
	}
}

// checkToolList: after server-everything's burst of tools/list_changed
// right after initialize, the registry settles on exactly featureTools
// and the server is ready, never restarted, with 20 tools and 4 prompts.
func checkToolList(t *testing.T, rt *testRuntime) {
	list := rt.settledTools(t)
	got := toolNames(list)
	want := slices.Clone(featureTools)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("registered tools after the list_changed burst:\n got %v\nwant %v", got, want)
	}
	waitPrompts(t, rt, len(everythingPrompts))
	s := serverStatus(t, rt, "everything")
	if s.State != status.Ready || s.Restarts != 0 || s.ToolCount != len(featureTools) || s.PromptCount != len(everythingPrompts) {
		t.Errorf("status = %+v; want ready, 0 restarts, %d tools, %d prompts", s, len(featureTools), len(everythingPrompts))
	}
}

// settledTools waits until the registry has not changed for settleQuiet
// (bounded by toolsTimeout) and returns it.
func (rt *testRuntime) settledTools(t *testing.T) []tools.Tool {
	t.Helper()
	settleRegistry(t, rt.Runtime)
	return rt.Tools()
}

// waitPrompts waits until n prompts are registered (a server's prompts
// are listed after it shows ready) and returns them.
func waitPrompts(t *testing.T, rt *testRuntime, n int) []prompts.Prompt {
	t.Helper()
	var list []prompts.Prompt
	testutil.Eventually(t, toolsTimeout, fmt.Sprintf("%d prompts registered", n), func() bool { list = rt.Prompts(); return len(list) >= n })
	return list
}

func serverStatus(t testing.TB, rt *testRuntime, name string) status.Server {
	t.Helper()
	for _, s := range rt.Status().Servers {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no status for %q: %+v", name, rt.Status())
	return status.Server{}
}

// checkPrompts: the runtime's prompt registry lists the four prompts with
// their arguments, renders args-prompt and resource-prompt with the
// arguments given, and refuses a missing required argument and an
// unknown prompt.
func checkPrompts(t *testing.T, rt *testRuntime) {
	list := waitPrompts(t, rt, len(everythingPrompts))
	if len(list) != len(everythingPrompts) {
		t.Fatalf("Prompts() = %+v, want exactly %d", list, len(everythingPrompts))
	}
	for i, want := range everythingPrompts {
		p := list[i]
		if p.Name != want.name || p.Server != "everything" || p.Name != "everything__"+p.OriginalName ||
			p.Title != want.title || p.Description == "" {
			t.Errorf("prompt %d = %+v; want %s (%q) of server everything, with a description", i, p, want.name, want.title)
		}
		if !slices.Equal(p.Arguments, want.args) {
			t.Errorf("%s: arguments\n got %+v\nwant %+v", p.Name, p.Arguments, want.args)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	r, err := rt.GetPrompt(ctx, "everything__args-prompt", map[string]string{"city": "Paris", "state": "Texas"})
	if err != nil {
		t.Fatalf("GetPrompt(args-prompt): %v", err)
	}
	if len(r.Messages) != 1 || r.Messages[0].Role != "user" || r.Messages[0].Content.Type != tools.ContentText ||
		r.Messages[0].Content.Text != "What's weather in Paris, Texas?" {
		t.Errorf("GetPrompt(args-prompt, Paris, Texas) = %+v; want one user text message %q", r, "What's weather in Paris, Texas?")
	}

	r, err = rt.GetPrompt(ctx, "everything__simple-prompt", nil)
	if err != nil || len(r.Messages) != 1 || r.Messages[0].Content.Text != "This is a simple prompt without arguments." {
		t.Errorf("GetPrompt(simple-prompt) = %+v, %v", r, err)
	}

	r, err = rt.GetPrompt(ctx, "everything__resource-prompt", map[string]string{"resourceType": "Text", "resourceId": "3"})
	if err != nil {
		t.Fatalf("GetPrompt(resource-prompt): %v", err)
	}
	if len(r.Messages) != 2 || !strings.Contains(r.Messages[0].Content.Text, "Text resource with id: 3") ||
		r.Messages[1].Content.Text != "[resource: demo://resource/dynamic/text/3]" {
		t.Errorf("GetPrompt(resource-prompt, Text, 3) = %+v; want the intro naming id 3 and [resource: demo://resource/dynamic/text/3]", r)
	}

	start := time.Now()
	_, err = rt.GetPrompt(ctx, "everything__args-prompt", map[string]string{"state": "Texas"})
	var argErr *prompts.ArgumentError
	if !errors.As(err, &argErr) || argErr.Argument != "city" || argErr.Prompt != "everything__args-prompt" {
		t.Errorf("GetPrompt(args-prompt) without city: err = %v (%T); want a *prompts.ArgumentError for city", err, err)
	}
	if d := time.Since(start); d > promptly {
		t.Errorf("the refusal took %v", d)
	}
	if _, err := rt.GetPrompt(ctx, "everything__no-such-prompt", nil); !errors.Is(err, prompts.ErrUnknownPrompt) {
		t.Errorf("GetPrompt(no-such-prompt): err = %v, want prompts.ErrUnknownPrompt", err)
	}
}

// checkPromptTools: everything__list_prompts and everything__get_prompt,
// the model's way to the same prompts.
func checkPromptTools(t *testing.T, rt *testRuntime) {
	res := rt.call(t, "everything__list_prompts", map[string]any{})
	var listed struct {
		Prompts []struct {
			Name      string             `json:"name"`
			Arguments []prompts.Argument `json:"arguments"`
		} `json:"prompts"`
	}
	if err := json.Unmarshal([]byte(resultText(res)), &listed); err != nil {
		t.Fatalf("list_prompts result is not the JSON listing: %v\n%s", err, resultText(res))
	}
	var names []string
	for _, p := range listed.Prompts {
		names = append(names, p.Name)
		if p.Name == "args-prompt" {
			if !slices.Contains(p.Arguments, prompts.Argument{Name: "city", Description: "Name of the city", Required: true}) {
				t.Errorf("list_prompts: args-prompt arguments %+v, want city (required)", p.Arguments)
			}
		}
	}
	slices.Sort(names)
	if want := []string{"args-prompt", "completable-prompt", "resource-prompt", "simple-prompt"}; !slices.Equal(names, want) {
		t.Errorf("list_prompts names = %v, want %v", names, want)
	}

	res = rt.call(t, "everything__get_prompt", map[string]any{"name": "args-prompt", "arguments": map[string]any{"city": "Lyon"}})
	if got := resultText(res); got != "user: What's weather in Lyon?" {
		t.Errorf("get_prompt(args-prompt, Lyon) = %q, want %q", got, "user: What's weather in Lyon?")
	}
	res = rt.call(t, "everything__get_prompt", map[string]any{"name": "completable-prompt",
		"arguments": map[string]any{"department": "Engineering", "name": "Alice"}})
	if got := resultText(res); !strings.Contains(got, "Alice") || !strings.Contains(got, "Engineering") {
		t.Errorf("get_prompt(completable-prompt) = %q, want Alice and Engineering in it", got)
	}

	// A missing required argument: the server refuses it.
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	res, err := rt.CallTool(ctx, "everything__get_prompt", map[string]any{"name": "args-prompt", "arguments": map[string]any{"state": "Texas"}})
	if err == nil && !res.IsError {
		t.Errorf("get_prompt(args-prompt) without city = %+v, want an error", res)
	} else {
		t.Logf("get_prompt without city: err=%v result=%q", err, resultText(res))
	}
}

// checkResourceTools: everything__list_resources lists the static
// documents (one per file in the package's docs/) and the templates, and
// everything__read_resource reads one with the file's text.
func checkResourceTools(t *testing.T, rt *testRuntime) {
	docsDir := filepath.Join(filepath.Dir(everythingJS), "docs")
	entries, err := os.ReadDir(docsDir)
	if err != nil {
		t.Fatal(err)
	}
	var wantDocs []string
	for _, e := range entries {
		if !e.IsDir() {
			wantDocs = append(wantDocs, "demo://resource/static/document/"+e.Name())
		}
	}
	if len(wantDocs) == 0 {
		t.Fatalf("no documents in %s", docsDir)
	}

	res := rt.call(t, "everything__list_resources", map[string]any{})
	listing := parseResourceListing(t, res)
	var gotDocs []string
	for _, r := range listing.Resources {
		if strings.HasPrefix(r.URI, "demo://resource/static/document/") {
			gotDocs = append(gotDocs, r.URI)
			if r.MIMEType != "text/markdown" || r.Name == "" {
				t.Errorf("resource %+v: want a name and mime type text/markdown", r)
			}
		}
	}
	slices.Sort(gotDocs)
	slices.Sort(wantDocs)
	if !slices.Equal(gotDocs, wantDocs) {
		t.Errorf("list_resources static documents:\n got %v\nwant %v", gotDocs, wantDocs)
	}
	var templates []string
	for _, tp := range listing.Templates {
		templates = append(templates, tp.URITemplate)
	}
	for _, want := range []string{"demo://resource/dynamic/text/{resourceId}", "demo://resource/dynamic/blob/{resourceId}"} {
		if !slices.Contains(templates, want) {
			t.Errorf("list_resources templates = %v, want %s among them", templates, want)
		}
	}

	const doc = "features.md"
	file, err := os.ReadFile(filepath.Join(docsDir, doc))
	if err != nil {
		t.Fatal(err)
	}
	res = rt.call(t, "everything__read_resource", map[string]any{"uri": "demo://resource/static/document/" + doc})
	if len(res.Content) != 1 || res.Content[0].Type != tools.ContentText || res.Content[0].Text != string(file) {
		t.Errorf("read_resource(%s) = %+v; want one text block with the file's %d bytes", doc, res, len(file))
	}
	res = rt.call(t, "everything__read_resource", map[string]any{"uri": "demo://resource/dynamic/text/2"})
	if got := resultText(res); !strings.Contains(got, "2") || got == "" {
		t.Errorf("read_resource(demo://resource/dynamic/text/2) = %q", got)
	}
}

type listedResource struct {
	URI      string `json:"uri"`
	Name     string `json:"name"`
	MIMEType string `json:"mime_type"`
}

type resourceListing struct {
	Resources []listedResource `json:"resources"`
	Templates []struct {
		URITemplate string `json:"uri_template"`
	} `json:"resource_templates"`
	NextCursor string `json:"next_cursor"`
}

func parseResourceListing(t *testing.T, res tools.Result) resourceListing {
	t.Helper()
	var l resourceListing
	if err := json.Unmarshal([]byte(resultText(res)), &l); err != nil {
		t.Fatalf("list_resources result is not the JSON listing: %v\n%s", err, resultText(res))
	}
	if l.NextCursor != "" {
		t.Errorf("list_resources paginated (next_cursor %q); this test expects one page", l.NextCursor)
	}
	return l
}

// checkSampling: trigger-sampling-request reaches Options.Sample with the
// server's name and the request, and the tool's result carries the fake
// model's answer.
func checkSampling(t *testing.T, rt *testRuntime, model *fakeModel) {
	before := len(model.recorded())
	res := rt.call(t, "everything__trigger-sampling-request", map[string]any{"prompt": "what colour is the sky?", "maxTokens": 42})
	calls := model.recorded()[before:]
	if len(calls) != 1 {
		t.Fatalf("the model was asked %d times, want once: %+v", len(calls), calls)
	}
	c := calls[0]
	want := "user: Resource trigger-sampling-request context: what colour is the sky?"
	if c.server != "everything" || len(c.messages) != 1 || c.messages[0] != want || c.maxTokens != 42 ||
		c.systemPrompt != "You are a helpful test server." {
		t.Errorf("sampling request = %+v; want server everything, message %q, maxTokens 42, the server's system prompt", c, want)
	}
	if got := resultText(res); !strings.Contains(got, model.text) || !strings.Contains(got, "fake-model") {
		t.Errorf("trigger-sampling-request = %q; want the fake model's text %q and its name", got, model.text)
	}
}

// checkSamplingNotConfigured: without Options.Sample the same tool fails
// at once, saying sampling is not configured.
func checkSamplingNotConfigured(t *testing.T, rt *testRuntime) {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	start := time.Now()
	res, err := rt.CallTool(ctx, "everything__trigger-sampling-request", map[string]any{"prompt": "anyone there?"})
	elapsed := time.Since(start)
	if elapsed > promptly {
		t.Errorf("the call took %v, want an answer within %v", elapsed, promptly)
	}
	var msg string
	switch {
	case err != nil:
		msg = err.Error()
	case res.IsError:
		msg = resultText(res)
	default:
		t.Fatalf("trigger-sampling-request without a sampler succeeded: %+v", res)
	}
	if !strings.Contains(msg, "sampling is not configured") {
		t.Errorf("trigger-sampling-request without a sampler failed with %q; want it to say sampling is not configured", msg)
	}
	t.Logf("answered in %v: %s", elapsed.Round(time.Millisecond), msg)
}

// checkProgress: trigger-long-running-operation (duration in seconds)
// called with tools.WithProgress reports rising progress to the callback,
// and the runtime logs each report at Debug with the server's name.
func checkProgress(t *testing.T, rt *testRuntime) {
	var (
		mu      sync.Mutex
		reports []tools.Progress
	)
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	ctx = tools.WithProgress(ctx, func(p tools.Progress) {
		mu.Lock()
		reports = append(reports, p)
		mu.Unlock()
	})
	res, err := rt.CallTool(ctx, "everything__trigger-long-running-operation", map[string]any{"duration": 1, "steps": 3})
	if err != nil || res.IsError {
		t.Fatalf("trigger-long-running-operation: %+v, %v", res, err)
	}
	if got, want := resultText(res), "Long running operation completed. Duration: 1 seconds, Steps: 3."; got != want {
		t.Errorf("result = %q, want %q", got, want)
	}
	// The last report may travel just behind the result; the callback
	// still gets it for a moment after the call returned.
	var got []tools.Progress
	testutil.Within(time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		got = slices.Clone(reports)
		return len(got) >= 3
	})
	if len(got) != 3 {
		t.Fatalf("progress reports %+v, want all 3", got)
	}
	for i, p := range got {
		if p.Total != 3 || p.Progress < 1 || p.Progress > 3 || (i > 0 && p.Progress <= got[i-1].Progress) {
			t.Errorf("progress reports %+v: want rising progress in 1..3 of total 3", got)
			break
		}
	}
	logged := rt.records.waitFor(t, promptly, "progress record", func(r logRecord) bool {
		return r.Message == "progress" && r.Attrs["server"] == "everything" && r.Level == slog.LevelDebug
	})
	if len(logged) < 2 {
		t.Errorf("progress records %v, want at least 2", logged)
	}
}

// checkRoots: get-roots-list shows the roots of Options.Roots, and the
// server said so in a log notification when it synced them.
func checkRoots(t *testing.T, rt *testRuntime) {
	res := rt.call(t, "everything__get-roots-list", map[string]any{})
	got := resultText(res)
	if !strings.Contains(got, "Current MCP Roots (1 total)") || !strings.Contains(got, "URI: "+projectRootURI) ||
		!strings.Contains(got, "1. "+projectRootName) {
		t.Errorf("get-roots-list = %q; want the one root %s (%s)", got, projectRootURI, projectRootName)
	}
	rt.records.waitFor(t, logWait, `"Roots updated" server log`, func(r logRecord) bool {
		return r.Message == "server log" && r.Attrs["server"] == "everything" &&
			r.Attrs["logger"] == "everything-server" && strings.Contains(r.Attrs["data"], "Roots updated: 1 root(s)")
	})
}

// checkNoRoots: without Options.Roots the server gets an empty list.
func checkNoRoots(t *testing.T, rt *testRuntime) {
	res := rt.call(t, "everything__get-roots-list", map[string]any{})
	if got := resultText(res); !strings.Contains(got, "no roots are currently configured") || strings.Contains(got, projectRootURI) {
		t.Errorf("get-roots-list without roots = %q; want the no-roots answer", got)
	}
}

// simulatedLevels maps the MCP levels server-everything's simulated logs
// use to the slog level the runtime logs them at.
var simulatedLevels = map[string]slog.Level{
	"debug": slog.LevelDebug, "info": slog.LevelInfo, "notice": slog.LevelInfo, "warning": slog.LevelWarn,
	"error": slog.LevelError, "critical": slog.LevelError, "alert": slog.LevelError, "emergency": slog.LevelError,
}

// checkLogging: toggle-simulated-logging makes the server send log
// notifications (one at once, then one every 5 s; it sends at every level
// while the client has set none), and they reach the runtime's logger as
// "server log" records tagged with the server's name.
func checkLogging(t *testing.T, rt *testRuntime) {
	isSimulated := func(r logRecord) bool {
		data := r.Attrs["data"]
		return r.Message == "server log" && r.Attrs["server"] == "everything" &&
			(strings.Contains(data, "-level message") || strings.Contains(data, "level-message"))
	}
	if got := rt.records.matching(isSimulated); len(got) > 0 {
		t.Fatalf("simulated logs before the toggle: %v", got)
	}
	res := rt.call(t, "everything__toggle-simulated-logging", map[string]any{})
	if got := resultText(res); !strings.Contains(got, "Started simulated") {
		t.Fatalf("toggle-simulated-logging = %q, want it started", got)
	}
	got := rt.records.waitFor(t, simulatedLogWait, "simulated server log", isSimulated)
	for _, r := range got {
		want, ok := simulatedLevels[r.Attrs["mcp_level"]]
		if !ok || r.Level != want {
			t.Errorf("server log record %v: MCP level %q logged at %v, want %v", r, r.Attrs["mcp_level"], r.Level, want)
		}
	}
	t.Logf("first simulated log: %v", got[0])
	res = rt.call(t, "everything__toggle-simulated-logging", map[string]any{})
	if got := resultText(res); !strings.Contains(got, "Stopped simulated") {
		t.Errorf("second toggle-simulated-logging = %q, want it stopped", got)
	}
}

// checkGzipResource: gzip-file-as-resource registers a session resource,
// which makes the server send resources/list_changed; the runtime takes
// it (logged at Debug), the call returns the link or the embedded
// resource, the new resource is listed and readable, and the session
// lives on.
func checkGzipResource(t *testing.T, rt *testRuntime) {
	const name = "peers.txt.gz"
	const uri = "demo://resource/session/" + name
	data := "data:text/plain;base64," + base64.StdEncoding.EncodeToString([]byte("hello from the peer tests\n"))
	isChange := func(r logRecord) bool {
		return r.Message == "resources changed" && r.Attrs["server"] == "everything"
	}
	before := len(rt.records.matching(isChange))

	res := rt.call(t, "everything__gzip-file-as-resource", map[string]any{"name": name, "data": data, "outputType": "resourceLink"})
	if got := resultText(res); !strings.HasPrefix(got, "[resource link: "+name+" "+uri) || !strings.Contains(got, "application/gzip") {
		t.Errorf("gzip-file-as-resource (resourceLink) = %q; want a resource link line for %s", got, uri)
	}
	res = rt.call(t, "everything__gzip-file-as-resource", map[string]any{"name": name, "data": data, "outputType": "resource"})
	if got := resultText(res); got != "[resource: "+uri+"]" {
		t.Errorf("gzip-file-as-resource (resource) = %q; want %q", got, "[resource: "+uri+"]")
	}

	testutil.Eventually(t, promptly, "a resources/list_changed to reach the runtime", func() bool { return len(rt.records.matching(isChange)) > before })

	listing := parseResourceListing(t, rt.call(t, "everything__list_resources", map[string]any{}))
	if !slices.ContainsFunc(listing.Resources, func(r listedResource) bool {
		return r.URI == uri && r.MIMEType == "application/gzip"
	}) {
		t.Errorf("list_resources after gzip-file-as-resource = %+v; want %s (application/gzip)", listing.Resources, uri)
	}
	res = rt.call(t, "everything__read_resource", map[string]any{"uri": uri})
	if got := resultText(res); !strings.HasPrefix(got, "[resource: "+uri+" (application/gzip, ") || !strings.HasSuffix(got, " bytes of binary data)]") {
		t.Errorf("read_resource(%s) = %q; want the binary placeholder", uri, got)
	}

	res = rt.call(t, "everything__echo", map[string]any{"message": "still here"})
	if !strings.Contains(resultText(res), "still here") {
		t.Errorf("echo after the resource change = %+v", res)
	}
	if s := serverStatus(t, rt, "everything"); s.State != status.Ready || s.Restarts != 0 || s.ToolCount != len(featureTools) {
		t.Errorf("status after the resource change = %+v; want ready, 0 restarts, %d tools", s, len(featureTools))
	}
}

// checkElicitation: trigger-elicitation-request reaches Options.Elicit
// with the server's name, and the tool reports the accepted content.
func checkElicitation(t *testing.T, rt *testRuntime, user *fakeUser) {
	before := len(user.recorded())
	res := rt.call(t, "everything__trigger-elicitation-request", map[string]any{})
	calls := user.recorded()[before:]
	if len(calls) != 1 {
		t.Fatalf("the user was asked %d times, want once: %+v", len(calls), calls)
	}
	if c := calls[0]; c.server != "everything" || c.message != "Please provide inputs for the following fields:" || !c.schema {
		t.Errorf("elicitation request = %+v; want server everything, the server's message and a schema", c)
	}
	got := resultText(res)
	for _, want := range []string{"User provided the requested information", "- Name: Ada Lovelace", "- Agreed to terms: true", "- Favorite Integer: 7"} {
		if !strings.Contains(got, want) {
			t.Errorf("trigger-elicitation-request = %q; want %q in it", got, want)
		}
	}
}

// checkElicitationDeclined: without Options.Elicit the request is
// declined at once and the tool says so.
func checkElicitationDeclined(t *testing.T, rt *testRuntime) {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	start := time.Now()
	res, err := rt.CallTool(ctx, "everything__trigger-elicitation-request", map[string]any{})
	elapsed := time.Since(start)
	if err != nil || res.IsError {
		t.Fatalf("trigger-elicitation-request without Elicit: %+v, %v", res, err)
	}
	if elapsed > promptly {
		t.Errorf("the call took %v, want an answer within %v", elapsed, promptly)
	}
	got := resultText(res)
	if !strings.Contains(got, "User declined to provide the requested information") || !strings.Contains(got, `"action": "decline"`) {
		t.Errorf("trigger-elicitation-request without Elicit = %q; want the decline", got)
	}
}

// resultText joins the text blocks of a result with newlines.
func resultText(res tools.Result) string {
	var parts []string
	for _, c := range res.Content {
		if c.Type == tools.ContentText {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}
