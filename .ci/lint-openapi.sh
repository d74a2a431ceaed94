#!/usr/bin/env bash
# lint-openapi.sh lints searchapi/openapi.json with Redocly's recommended
# rules (part of `make test`). @redocly/cli is pinned in .ci/redocly (with its
# package-lock.json) and installed once with `npm ci` under .cache/redocly;
# a changed lock file reinstalls. Needs node and npm (and the npm registry
# the first time).
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=.cache/redocly
if [[ ! -x "$DIR/node_modules/.bin/redocly" ]] || ! cmp -s .ci/redocly/package-lock.json "$DIR/package-lock.json"; then
	rm -rf "$DIR"
	mkdir -p "$DIR"
	cp .ci/redocly/package.json .ci/redocly/package-lock.json "$DIR/"
	(cd "$DIR" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
fi
exec "$DIR/node_modules/.bin/redocly" lint --extends=recommended --format=stylish searchapi/openapi.json "$@"
