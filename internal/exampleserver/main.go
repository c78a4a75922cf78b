package exampleserver

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

// Exit codes returned by [Main]. A panic from [Options.PanicOnTool] exits
// with the Go runtime's status 2, the same as a usage error.
const (
	// ExitCodeOK means the client closed stdin.
	ExitCodeOK = 0
	// ExitCodeFailure means the server failed, or GarbageStdout mode ran.
	ExitCodeFailure = 1
	// ExitCodeUsage means the arguments were not valid.
	ExitCodeUsage = 2
	// ExitCodeExitRequested means ExitAfterCalls tool calls were answered.
	ExitCodeExitRequested = 3
)

// Main runs the example server on os.Stdin and os.Stdout and returns the
// process exit code; it is what `demo serve` calls. args are the arguments
// after the command name:
//
//	-name NAME             server implementation name (default "mcpvisor-example")
//	-change-tool           register the change tool, which adds tools, prompts and resources
//	-update-tool           register the update tool, which changes a note and tells its subscribers,
//	                       and end_subscriptions, which ends their streams
//	-leak-tool             register the leak tool, which quotes env and headers in errors and stderr
//	-fault-tools           register the fault tools huge and ask
//	-result-tools          register the result tools (structured results, audio, annotations, links)
//	-icon-flood            register a tool and a prompt with too many icons, one quoting $ICON_TOKEN
//	-sized-tools           register the sized tool, which answers with as many bytes as asked for
//	-freeze-tool           register the freeze tool (a deadlock on demand) and the probes tool
//	-progress-tools        register progress, progress_silent and meta (progress reports, _meta echo)
//	-protocol VERSION      speak only this protocol version
//	-no-logging            do not declare logging in the capabilities
//	-instructions-file P   add the text of the file P (read at start) to the instructions
//	-initialize-delay D    wait D (a duration: 100ms) before answering initialize
//	-initialize-dir DIR    record initialize in DIR/initialize.log with how many were in flight
//	-initialize-barrier N  with -initialize-dir: hold initialize until N servers of DIR began theirs (at most 30 s)
//	-hang-initialize       never answer initialize
//	-cold-start DURATION   write stderr lines (quoting $COLD_START_TOKEN), then wait DURATION before answering initialize
//	-cold-start-gate PATH  end the cold start's wait early once a file exists at PATH
//	-exit-after-calls N    exit with code 3 after N answered tool calls
//	-garbage-stdout        write non-JSON lines to stdout, then exit 1
//	-ignore-sigterm        ignore SIGTERM
//	-panic-on-tool NAME    crash when the tool NAME is called
func Main(args []string) int {
	return mainWith(args, os.Stdin, os.Stdout, os.Stderr)
}

// mainWith is Main on explicit streams, so that tests can drive it without a
// process of its own.
func mainWith(args []string, stdin io.ReadCloser, stdout io.WriteCloser, stderr io.Writer) int {
	opts := Options{Stderr: stderr}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&opts.Name, "name", DefaultName, "server implementation `name`")
	fs.BoolVar(&opts.ChangeTool, "change-tool", false, "register the change tool, which adds tools, prompts and resources at runtime")
	fs.BoolVar(&opts.UpdateTool, "update-tool", false, "register the update tool, which changes a note demo://notes/{id} and tells the clients subscribed to it")
	fs.BoolVar(&opts.LeakTool, "leak-tool", false, "register the leak tool, which quotes environment variables and request headers in errors and on stderr")
	fs.BoolVar(&opts.FaultTools, "fault-tools", false, "register the fault tools: huge (one answer of any size) and ask (floods the client with sampling or elicitation requests)")
	fs.BoolVar(&opts.ClientTools, "client-tools", false, "register the client tools: elicit and roots ask the client during the call and answer with what it said")
	fs.BoolVar(&opts.ResultTools, "result-tools", false, "register the result tools: structured, structured_broken, structured_missing, structured_failing, remote_ref, audio and annotated")
	fs.BoolVar(&opts.IconFlood, "icon-flood", false, "register the icons tool and prompt, with too many icons: a 1 MiB data: URI and a URL quoting $"+IconTokenEnv)
	fs.BoolVar(&opts.SizedTools, "sized-tools", false, "register the sized tool, which answers with text, images, audio and structured content of the sizes asked for")
	fs.BoolVar(&opts.FreezeTool, "freeze-tool", false, "register the freeze tool (after its call no request is answered) and the probes tool (counts ping and server/discover requests)")
	fs.BoolVar(&opts.ProgressTools, "progress-tools", false, "register the progress tools: progress (reports every period_ms), progress_silent (reports, then silence) and meta (echoes _meta)")
	fs.StringVar(&opts.Protocol, "protocol", "", "speak only this protocol `version` (e.g. 2025-11-25)")
	fs.BoolVar(&opts.NoLogging, "no-logging", false, "do not declare logging in the server's capabilities")
	fs.StringVar(&opts.InstructionsFile, "instructions-file", "", "add the text of the file at `path` (read at start) to the instructions")
	fs.DurationVar(&opts.InitializeDelay, "initialize-delay", 0, "wait `duration` before answering initialize (a server slow to start)")
	fs.StringVar(&opts.InitializeDir, "initialize-dir", "", "record initialize in `dir`/"+InitializeLog+" with how many servers sharing dir were in theirs")
	fs.IntVar(&opts.InitializeBarrier, "initialize-barrier", 0, "with -initialize-dir: hold initialize until `N` servers sharing dir have begun theirs (at most 30 s)")
	fs.BoolVar(&opts.HangInitialize, "hang-initialize", false, "never answer initialize")
	fs.DurationVar(&opts.ColdStart, "cold-start", 0, "write a burst of stderr lines (quoting $"+ColdStartTokenEnv+" if set), then wait `duration` before answering initialize")
	fs.StringVar(&opts.ColdStartGate, "cold-start-gate", "", "end the cold start's wait early once a file exists at `path`")
	fs.IntVar(&opts.ExitAfterCalls, "exit-after-calls", 0, "exit with code 3 after `N` answered tool calls (0: never)")
	fs.BoolVar(&opts.GarbageStdout, "garbage-stdout", false, "write non-JSON lines to stdout, then exit 1")
	fs.BoolVar(&opts.IgnoreSIGTERM, "ignore-sigterm", false, "ignore SIGTERM")
	fs.StringVar(&opts.PanicOnTool, "panic-on-tool", "", "crash when the tool `name` is called")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitCodeOK
		}
		return ExitCodeUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "serve: unexpected arguments %q\n", fs.Args())
		return ExitCodeUsage
	}
	if opts.InitializeDelay < 0 {
		fmt.Fprintf(stderr, "serve: -initialize-delay must not be negative, got %v\n", opts.InitializeDelay)
		return ExitCodeUsage
	}
	if opts.InitializeBarrier < 0 || (opts.InitializeBarrier > 0 && opts.InitializeDir == "") {
		fmt.Fprintf(stderr, "serve: -initialize-barrier takes a positive count and -initialize-dir, got %d\n", opts.InitializeBarrier)
		return ExitCodeUsage
	}
	if opts.ExitAfterCalls < 0 {
		fmt.Fprintf(stderr, "serve: -exit-after-calls must not be negative, got %d\n", opts.ExitAfterCalls)
		return ExitCodeUsage
	}

	err := Run(context.Background(), opts, stdin, stdout)
	switch {
	case err == nil:
		return ExitCodeOK
	case errors.Is(err, ErrExitRequested):
		return ExitCodeExitRequested
	default:
		fmt.Fprintf(stderr, "example server: %v\n", err)
		return ExitCodeFailure
	}
}
