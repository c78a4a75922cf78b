// Command demo shows mcpvisor end to end with nothing to install.
//
//	demo                      the tour: runs its own example server through the runtime
//	demo run -state-dir DIR [-listen ADDR] [-v] [-debug] [-apps] [-startup-concurrency N] [-tool-search [-pin GLOBS]] [-keepalive DURATION] [-project DIR]... [-home DIR] [-otel EXPORTERS] [-mcp-listen ADDR [-mcp-token-file FILE] [-mcp-allow GLOBS] [-mcp-deny GLOBS] [-mcp-startup-wait DURATION]]
//	                          runs the runtime on DIR/mcp_servers.json and serves its management
//	                          API on ADDR (default 127.0.0.1:7077) until SIGINT/SIGTERM; SIGHUP reloads;
//	                          -mcp-listen also serves the gateway over Streamable HTTP at /mcp
//	demo gateway -state-dir DIR [-v] [-allow GLOBS] [-deny GLOBS] [-startup-concurrency N] [-startup-wait DURATION] [-tool-search [-pin GLOBS]]
//	                          runs the runtime on DIR and serves its registry as one MCP server on stdio
//	demo import [-from HOST|FILE] [-format F] [-state-dir DIR] [-home DIR] [-project DIR]... [-dry-run]
//	                          diffs other hosts' servers against DIR/mcp_servers.json and adds the new ones
//	demo serve [flags]        the example MCP server on stdio (what the tour connects to)
package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/lmittmann/tint"

	"github.com/openprogram/mcpvisor/internal/exampleserver"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	if len(args) == 0 {
		return tour(os.Stdout, newLogger(os.Stderr, slog.LevelInfo))
	}
	switch args[0] {
	case "serve":
		return exampleserver.Main(args[1:])
	case "run":
		return runServe(args[1:])
	case "gateway":
		return runGateway(args[1:])
	case "import":
		return runImport(os.Stdout, os.Stderr, args[1:])
	case "tour":
		return tour(os.Stdout, newLogger(os.Stderr, slog.LevelInfo))
	case "-h", "-help", "--help", "help":
		fmt.Fprint(os.Stdout, usage)
		return 0
	default:
		fmt.Fprintf(os.Stderr, "demo: unknown command %q\n%s", args[0], usage)
		return 2
	}
}

const usage = `usage:
  demo                      the tour: start the runtime on an embedded config, show tools, calls,
                            prompts, resources, a list change and crash recovery
  demo run -state-dir DIR [-listen ADDR] [-v] [-debug] [-apps] [-startup-concurrency N] [-tool-search [-pin GLOBS]] [-keepalive DURATION] [-project DIR]... [-home DIR] [-otel EXPORTERS] [-mcp-listen ADDR [-mcp-token-file FILE] [-mcp-allow GLOBS] [-mcp-deny GLOBS] [-mcp-startup-wait DURATION]]
                            run the runtime on DIR/mcp_servers.json and serve its management API
                            on ADDR (default 127.0.0.1:7077) until SIGINT or SIGTERM; SIGHUP reloads
  demo gateway -state-dir DIR [-v] [-allow GLOBS] [-deny GLOBS] [-startup-concurrency N] [-startup-wait DURATION] [-tool-search [-pin GLOBS]]
                            run the runtime on DIR/mcp_servers.json and serve every server's tools,
                            prompts and resources as one MCP server on stdin/stdout (logs on stderr)
                            until stdin ends or SIGINT/SIGTERM
  demo import [-from HOST|FILE] [-format F] [-state-dir DIR] [-home DIR] [-project DIR]... [-dry-run]
                            print the diff (masked) of other hosts' servers (all hosts, one, or one
                            file) against DIR/mcp_servers.json and add the servers it calls "add"
  demo serve [flags]        the example MCP server on stdio (demo serve -h for its flags)
`

// newLogger writes colourful human logs to a terminal and plain slog text
// anywhere else (files, CI logs), where colour codes would be noise.
func newLogger(w *os.File, level slog.Level) *slog.Logger {
	if isTerminal(w) {
		return slog.New(tint.NewTextHandler(w, &tint.Options{Level: level, TimeFormat: "15:04:05.000"}))
	}
	return slog.New(slog.NewTextHandler(io.Writer(w), &slog.HandlerOptions{Level: level}))
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
