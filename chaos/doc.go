// Package chaos holds the chaos suite: example servers under continuous
// calls, management changes and injected failures (actor panics, stops and
// poisons, SIGKILL and SIGSTOP of server processes), with the runtime's
// invariants checked throughout and at the end. `make chaos` runs it at
// CHAOS_KILLS=1000; `make test` runs a short round.
package chaos
