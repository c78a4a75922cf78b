package exampleserver

import (
	"errors"
	"io"
	"os"
	"time"
)

// DefaultName is the implementation name the server reports when
// [Options.Name] is empty.
const DefaultName = "mcpvisor-example"

// ReadyLine is the diagnostic line [Run] writes to [Options.Stderr] before
// anything else, in every mode, so that a harness can wait for the process to
// start before talking to it.
const ReadyLine = "example server ready"

// ErrExitRequested is returned by [Run] once [Options.ExitAfterCalls] tool
// calls have been answered; the caller is expected to exit the process.
var ErrExitRequested = errors.New("exampleserver: exit requested after the configured number of tool calls")

// ErrGarbageStdout is returned by [Run] in [Options.GarbageStdout] mode,
// after the garbage has been written.
var ErrGarbageStdout = errors.New("exampleserver: wrote garbage to stdout instead of serving")

// Options configure the example server. The zero value is a well-behaved
// server with fixed lists of tools, prompts and resources. ChangeTool lets a
// client change those lists; every other field injects one fault for tests.
type Options struct {
	// Name is the server implementation name; default [DefaultName].
	Name string
	// ChangeTool registers the change tool, whose calls add a tool, prompt
	// or resource to the running server, which then sends the matching
	// notifications/*/list_changed (see the package doc). Off by default,
	// so that the tool list that other tests and the demo tour count stays
	// the same.
	ChangeTool bool
	// UpdateTool registers the update tool, whose calls change a note
	// (demo://notes/{id}) and send notifications/resources/updated to the
	// sessions subscribed to it, and the end_subscriptions tool, which
	// ends the open subscription streams of protocol 2026-07-28 (or
	// refuses new ones). Off by default, like ChangeTool.
	UpdateTool bool
	// LeakTool registers the leak tool, which quotes environment variables
	// and request headers in an error and on stderr, as a careless server
	// does (see [LeakToolName]). Off by default, like ChangeTool.
	LeakTool bool
	// FaultTools registers the fault tools: huge answers with one text
	// block of any size (a frame over a transport's limit), and ask sends
	// a flood of sampling or elicitation requests to the client. Off by
	// default, like ChangeTool.
	FaultTools bool
	// ClientTools registers the client tools: elicit and roots ask the
	// client during the call and answer with what it said; the server
	// writes [RootsChangedLine] to stderr on each roots list_changed.
	ClientTools bool
	// ResultTools registers the result tools: structured content that
	// matches its output schema and some that does not, an output schema
	// with a remote $ref, audio, annotations and resource links (see the
	// package doc). Off by default, like ChangeTool.
	ResultTools bool
	// IconFlood registers a tool and a prompt with too many icons, one a
	// 1 MiB data: URI and one quoting an environment variable (see
	// [IconFloodName]). Off by default, like ChangeTool.
	IconFlood bool
	// SizedTools registers the sized tool, which answers with text,
	// image, audio and structured content of the sizes asked for (output
	// caps). Off by default, like ChangeTool.
	SizedTools bool
	// FreezeTool registers the freeze tool, after whose call the server
	// answers no request any more while its process keeps running (a
	// deadlock), and the probes tool, which counts the ping and
	// server/discover requests received (see [FreezeToolName]). Off by
	// default, like ChangeTool.
	FreezeTool bool
	// ProgressTools registers progress, progress_silent (progress reports,
	// then silence) and meta (echoes the request's _meta). Off by default,
	// like ChangeTool.
	ProgressTools bool
	// Protocol, if set, is the only protocol version the server speaks
	// (an older one than the client's first choice makes it talk like an
	// older server: sampling and elicitation as requests of its own).
	Protocol string
	// NoLogging leaves logging out of the server's capabilities (the SDK
	// declares it by default), as a server that never logs does.
	NoLogging bool
	// InstructionsFile, if set, names a file whose text the server adds
	// to its instructions, read when the server starts (a missing file
	// adds nothing): a test changes the file and restarts the server to
	// see its instructions change, or plants a secret in them.
	InstructionsFile string

	// InitializeDelay makes the server wait this long before it answers
	// its opening handshake (initialize, or server/discover on protocol
	// 2026-07-28): a server that is slow to start.
	InitializeDelay time.Duration
	// InitializeDir, if set, is a directory where the server records its
	// opening handshake in [InitializeLog], with how many servers sharing
	// the directory were in theirs at that moment (see the package doc).
	InitializeDir string
	// InitializeBarrier, with InitializeDir, holds the opening handshake
	// (before the delay) until that many servers sharing the directory
	// have begun theirs since it was made, or InitializeBarrierWait
	// passed: a test that must see N handshakes in flight at once makes
	// the first N wait for each other instead of hoping a delay is long
	// enough for them to overlap.
	InitializeBarrier int
	// InitializeBarrierWait bounds the wait for the barrier (zero: 30 s);
	// past it the handshake goes on, and the log shows fewer in flight.
	InitializeBarrierWait time.Duration

	// HangInitialize makes [Run] read and discard its input without ever
	// answering, so a client's initialize never completes. [NewServer]
	// ignores it.
	HangInitialize bool
	// ColdStart, when positive, makes [Run] write [ColdStartLines] lines
	// to Stderr (after [ReadyLine]) and then wait that long before it
	// answers anything, initialize included: a cold `npx` start. The
	// lines quote $[ColdStartTokenEnv] when it is set. [NewServer]
	// ignores it.
	ColdStart time.Duration
	// ColdStartGate, with ColdStart, ends the wait early once a file
	// exists at this path: a test lets the start finish when it has seen
	// what it looks for.
	ColdStartGate string
	// ExitAfterCalls, when positive, makes [Run] return [ErrExitRequested]
	// once that many tool calls have been answered (the answer is written
	// first). [NewServer] ignores it.
	ExitAfterCalls int
	// GarbageStdout makes [Run] write non-JSON lines to its output instead of
	// serving, and return [ErrGarbageStdout]. [NewServer] ignores it.
	GarbageStdout bool
	// IgnoreSIGTERM makes [Run] ignore SIGTERM for the whole process, so a
	// supervisor has to escalate to SIGKILL. Only meaningful in a process of
	// its own; never set it in a test binary.
	IgnoreSIGTERM bool
	// PanicOnTool, if non-empty, names a tool whose call panics in a handler
	// goroutine. The SDK does not recover handler panics, so this crashes the
	// process (exit status 2).
	PanicOnTool string
	// Stderr receives diagnostic lines; default os.Stderr. The server
	// serialises its own writes to it.
	Stderr io.Writer
}

// withDefaults returns a copy of o with the documented defaults filled in,
// so the rest of the package never checks for zero values.
func (o Options) withDefaults() Options {
	if o.Name == "" {
		o.Name = DefaultName
	}
	if o.Stderr == nil {
		o.Stderr = os.Stderr
	}
	return o
}
