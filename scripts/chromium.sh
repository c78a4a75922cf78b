#!/bin/sh
# Installs Debian's Chromium for the web console's browser tests
# (cmd/demo/console_test.go drives /usr/bin/chromium through chromedp) when
# it is missing; does nothing when it is there. Uses sudo only when not root.
set -eu
if [ -x /usr/bin/chromium ]; then
	exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
	echo "scripts/chromium.sh: /usr/bin/chromium is missing and there is no apt-get; install Chromium at /usr/bin/chromium" >&2
	exit 1
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
	if ! command -v sudo >/dev/null 2>&1; then
		echo "scripts/chromium.sh: /usr/bin/chromium is missing; installing it needs root, and there is no sudo: run 'apt-get install chromium' as root" >&2
		exit 1
	fi
	sudo="sudo"
fi
echo "installing chromium (for the web console's browser tests)" >&2
# env inside sudo: sudo's env_reset would drop a DEBIAN_FRONTEND set before it.
$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium
