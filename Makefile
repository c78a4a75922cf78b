# mcpvisor — every target works on a fresh clone with Go installed; test and
# conformance also need npm, to install the real peers they run.
GO      ?= go
PKGS    := ./...
FUZZTIME ?= 20s

.PHONY: build test demo bench lint cross fuzz chaos conformance screenshot

build:
	$(GO) build $(PKGS)

# Most Go tests need nothing beyond Go: the example MCP server they run as a
# subprocess is built from cmd/demo by the tests themselves. Two parts need
# npm (and Node) once, to install themselves: ./peers/, which runs the
# official server-everything (into .cache/everything), a fleet of popular
# servers for tool search (into .cache/fleet) and, in front of the gateway,
# the TypeScript SDK's client and the MCP Inspector (into
# .cache/gatewayclients), and the conformance suite
# after the Go tests (into .cache/conformance). The web console's browser
# tests drive Debian's Chromium, which scripts/chromium.sh installs with
# apt-get when /usr/bin/chromium is missing.
test:
	./scripts/chromium.sh
	$(GO) vet $(PKGS)
	$(GO) test -race -count=1 -timeout 8m $(PKGS)
	GO=$(GO) ./scripts/conformance.sh

# The official MCP conformance suite against cmd/conformance, a client on
# our runtime; fails on anything not in cmd/conformance/baseline.yml.
conformance:
	GO=$(GO) ./scripts/conformance.sh

demo:
	$(GO) build -o bin/demo ./cmd/demo
	./bin/demo

# Runtime.CallTool against a direct go-sdk ClientSession.CallTool on the same
# example server over stdio, in memory and over Streamable HTTP, and with 8
# and 64 concurrent callers on one stdio server, printed side by side with
# the ratio, its spread over the runs and its target (P1: against a direct
# client configured as the runtime's session is; against a bare one with
# no target), the three sides run by turns in 10 rounds
# (MCPVISOR_BENCH_ROUNDS, each round starting at the next side), the same
# for OpenTelemetry's cost (four sides), and CallTool and
# SIGKILL-to-ready alone against with a subscriber that never reads; then readiness,
# recovery, shutdown, concurrency and a 10 000-server startup; then 50 slow
# servers started one after another against 8 at once (the two sides run
# by turns in each iteration), printed beside its target; then 50 stdio
# servers with StartupConcurrency 1 until ready against 50 direct go-sdk
# connects (+ tools/list) one after another, and each server's RSS and
# heap in the runtime against the go-sdk client (each side in a child
# process of its own, at 1 and 50 servers; Linux), beside their targets;
# then tool search
# on the npm fleet of ./peers/ (installed like `make test` does, run offline):
# the deferred mode's tokens, the query set's hit rates and the search latency
# over 1000 tools, each against its target.
# Each benchmark is piped through tee: with pipefail a failing one fails
# make bench (tee alone would exit 0), and benchratio exits 1 when a
# target's figures are missing or invalid.
bench: SHELL := bash
bench: .SHELLFLAGS := -o pipefail -c
bench:
	@mkdir -p bin
	MCPVISOR_BENCH_ROUNDS=10 $(GO) test -run '^$$' -bench 'BenchmarkCallTool$$' -benchmem -count 1 -benchtime 3000x ./runtime/ | tee bin/bench.txt
	MCPVISOR_BENCH_ROUNDS=10 $(GO) test -run '^$$' -bench 'BenchmarkCallToolConcurrent' -benchmem -count 1 -benchtime 3000x ./runtime/ | tee -a bin/bench.txt
	MCPVISOR_BENCH_ROUNDS=10 $(GO) test -run '^$$' -bench 'BenchmarkCallToolOTel' -benchmem -count 1 -benchtime 3000x ./runtime/ | tee -a bin/bench.txt
	$(GO) test -run '^$$' -bench 'BenchmarkCallToolSubscriber' -benchmem -count 10 -benchtime 3000x ./runtime/ | tee -a bin/bench.txt
	$(GO) test -run '^$$' -bench 'BenchmarkRecoverySubscriber' -count 5 -benchtime 1x ./runtime/ | tee -a bin/bench.txt
	$(GO) test -run '^$$' -bench 'BenchmarkReadiness' -benchmem -count 3 -benchtime 20x ./runtime/
	$(GO) test -run '^$$' -bench 'BenchmarkRecovery$$|BenchmarkShutdown50' -count 3 -benchtime 1x ./runtime/
	$(GO) test -run '^$$' -bench 'BenchmarkConcurrentCalls' -count 3 -benchtime 5x ./runtime/
	$(GO) test -run '^$$' -bench 'BenchmarkStartup10k' -count 3 -benchtime 1x ./runtime/
	$(GO) test -run '^$$' -bench 'BenchmarkStartupConcurrency' -count 1 -benchtime 5x ./runtime/ | tee -a bin/bench.txt
	$(GO) test -run '^$$' -bench 'BenchmarkManyServersReady' -count 1 -benchtime 5x ./runtime/ | tee -a bin/bench.txt
	$(GO) test -run '^$$' -bench 'BenchmarkManyServersMemory' -count 1 -benchtime 3x ./runtime/ | tee -a bin/bench.txt
	$(GO) test -run '^$$' -bench 'BenchmarkToolSearch' -count 3 -benchtime 1x ./peers/ | tee -a bin/bench.txt
	MCPVISOR_BENCH_ROUNDS=10 $(GO) test -run '^$$' -bench 'BenchmarkGatewayCall' -benchmem -count 1 -benchtime 3000x ./runtime/ | tee -a bin/bench.txt
	$(GO) test -run '^$$' -bench 'BenchmarkGatewayListChanged|BenchmarkGatewayClients' -count 5 -benchtime 50x ./runtime/ | tee -a bin/bench.txt
	$(GO) run ./internal/benchratio < bin/bench.txt

# The chaos suite at CHAOS_KILLS injected failures (default 200; the bar is
# 1000); `make test` runs a short round of it.
CHAOS_KILLS ?= 200
chaos:
	@mkdir -p bin
	@CHAOS_KILLS=$(CHAOS_KILLS) $(GO) test -race -count=1 -v -run '^TestChaos$$' -timeout 30m ./chaos/ > bin/chaos.txt 2>&1; rc=$$?; \
	  grep -E '^(chaos:|--- |ok|FAIL|panic)|_test.go' bin/chaos.txt; exit $$rc

lint: cross
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)

# macOS and Windows, amd64 and arm64: the module builds, and go vet
# type-checks every package with its test files (so every test binary
# compiles; linking them too, with go test -c, costs minutes more for no
# check vet lacks). scripts/crosscheck.sh fails if a package or its tests
# vanish on a target (build constraints excluding every file, which go
# vet ./... skips silently), but for what it lists as meant to. Nothing
# here runs: those platforms are tested only by this, see the README's
# Platforms section.
CROSS ?= darwin/amd64 darwin/arm64 windows/amd64 windows/arm64
cross:
	@set -e; for p in $(CROSS); do \
	  echo "== $$p"; \
	  GOOS=$${p%/*} GOARCH=$${p#*/} $(GO) build $(PKGS); \
	  GOOS=$${p%/*} GOARCH=$${p#*/} $(GO) vet $(PKGS); \
	  ./scripts/crosscheck.sh $${p%/*} $${p#*/}; \
	done

# Each fuzz target for $(FUZZTIME).
fuzz:
	@set -e; for pkg in $$($(GO) list $(PKGS)); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; \
	done

# docs/console.png: a real screenshot of the web console, servers in
# several states, through the browser tests' Chromium.
screenshot:
	./scripts/chromium.sh
	@mkdir -p docs
	$(GO) test -count=1 -run '^TestConsoleScreenshot$$' ./cmd/demo -args -console-screenshot=$(CURDIR)/docs/console.png
