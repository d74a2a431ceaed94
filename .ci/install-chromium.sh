#!/usr/bin/env bash
# install-chromium.sh makes sure a headless Chromium is there for the browser
# test of the search site (searchapi/e2e TestSiteInBrowser). When none is on PATH
# and this runs as root with apt-get (CI on Debian), it installs Debian's
# chromium package. Anywhere else it says what is missing and succeeds: the
# test then skips itself with a message naming what it looked for.
set -uo pipefail

for b in chromium chromium-browser google-chrome google-chrome-stable; do
	if command -v "$b" >/dev/null 2>&1; then
		exit 0
	fi
done
if [[ "$(id -u)" != 0 ]]; then
	echo "install-chromium: no chromium on PATH and not root: the browser test will be skipped (install Debian's chromium package)" >&2
	exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
	echo "install-chromium: no chromium on PATH and no apt-get: the browser test will be skipped" >&2
	exit 0
fi
echo "install-chromium: installing Debian's chromium with apt-get" >&2
export DEBIAN_FRONTEND=noninteractive
if ! { apt-get update -qq >/dev/null && apt-get install -y -qq --no-install-recommends chromium >/dev/null; }; then
	echo "install-chromium: apt-get install chromium failed: the browser test will be skipped" >&2
fi
exit 0
