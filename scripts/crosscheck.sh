#!/usr/bin/env bash
# crosscheck.sh GOOS GOARCH: fails if a package, or a package's tests,
# that the host builds vanishes on GOOS/GOARCH (every file excluded by
# build constraints). `go build ./...` and `go vet ./...` skip such a
# package without a word, so `make cross` would otherwise pass while
# checking nothing of it there.
set -euo pipefail
goos=$1 goarch=$2
cd "$(dirname "$0")/.."

# What is meant to be missing, one "GOOS import-path what" a line, with why.
exempt=$(cat <<'LIST'
windows github.com/openprogram/mcpvisor/peers package
LIST
)
# peers: the suite against third-party npm servers starts them in process
# groups (Setpgid, kill(-pgid)), takes a flock for the shared npm install,
# and reads /proc/net/tcp for the loopback checks: Unix-only by design.

format='{{.ImportPath}}{{if or .TestGoFiles .XTestGoFiles}} tests{{end}}'
host=$(go list -f "$format" ./...)
target=$(GOOS=$goos GOARCH=$goarch go list -e -f "$format" ./...)
fail=0
while read -r pkg tests; do
	line=$(grep -x "$pkg\( tests\)\?" <<<"$target" || true)
	what=""
	if [[ -z $line ]]; then
		what=package
	elif [[ -n $tests && $line != *" tests" ]]; then
		what=tests
	fi
	[[ -z $what ]] && continue
	if grep -qx "$goos $pkg $what" <<<"$exempt"; then
		echo "   ($pkg: no $what on $goos, as listed in scripts/crosscheck.sh)"
		continue
	fi
	echo "crosscheck: $pkg has no $what on $goos/$goarch (every file excluded by build constraints): nothing of it is built or vetted there" >&2
	fail=1
done <<<"$host"
exit $fail
