// Package exampleserver is the built-in example MCP server: the program the
// demo binary runs as `demo serve`, and the real subprocess that mcpvisor's
// tests and benchmarks supervise.
//
// # Tools
//
// The server registers, in this order:
//
//   - echo {text}: returns exactly text.
//   - add {a, b}: returns a+b, formatted with strconv.FormatFloat(x, 'f', -1, 64).
//   - sleep {ms}: sleeps ms milliseconds, returning early with the context's
//     error when the call is cancelled; otherwise returns "slept <ms>ms".
//   - fail {}: returns a result with IsError set and "this tool always fails".
//   - image {}: returns a 2x2 PNG as an image block.
//   - resource {}: returns an embedded text resource "demo://resource/1".
//   - env {name}: returns the value of an environment variable of the server
//     process ("" when unset).
//   - stderr {text}: writes text as one line to [Options.Stderr], returns "ok".
//
// # Use in tests
//
// In-process, pair [NewServer] with mcp.NewInMemoryTransports. As a process,
// call [Main] (or [Run] on your own streams); the fault-injection fields of
// [Options] make it misbehave in the ways a supervisor has to survive.
package exampleserver
