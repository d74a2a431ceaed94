#!/usr/bin/env bash
# with-meilisearch.sh runs a command against a Meilisearch server.
# With MEILI_URL set, it uses that server. Otherwise it starts a throwaway
# instance (free loopback port, temporary data dir, random master key), waits
# for /health, runs the command with MEILI_URL and MEILI_API_KEY exported, and
# stops the instance by its PID whatever the command's outcome.
set -euo pipefail

export AGENTFINDER_REQUIRE_MEILI=1
if [[ -n "${MEILI_URL:-}" ]]; then
	exec "$@"
fi

BIN="$(bash "$(dirname "$0")/install-meilisearch.sh")"
# node is on every machine we support (it installs Meilisearch); use it for a free port and HTTP checks.
PORT="$(node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
DATA="$(mktemp -d -t agentfinder-meili-XXXXXX)"
KEY="$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')"

"$BIN" --http-addr "127.0.0.1:$PORT" --db-path "$DATA/db" --dump-dir "$DATA/dumps" \
	--snapshot-dir "$DATA/snapshots" --master-key "$KEY" --env development \
	--no-analytics --log-level WARN >"$DATA/meili.log" 2>&1 &
PID=$!
cleanup() {
	kill "$PID" 2>/dev/null || true
	wait "$PID" 2>/dev/null || true
	rm -rf "$DATA"
}
trap cleanup EXIT INT TERM

export MEILI_URL="http://127.0.0.1:$PORT"
export MEILI_API_KEY="$KEY"
export AGENTFINDER_MEILI_BIN="$BIN"
healthy() {
	node -e 'require("http").get(process.argv[1]+"/health",r=>process.exit(r.statusCode===200?0:1)).on("error",()=>process.exit(1))' "$MEILI_URL"
}
for _ in $(seq 1 200); do
	if healthy; then break; fi
	if ! kill -0 "$PID" 2>/dev/null; then cat "$DATA/meili.log" >&2; echo "with-meilisearch: meilisearch exited early" >&2; exit 1; fi
	sleep 0.1
done
healthy || { cat "$DATA/meili.log" >&2; echo "with-meilisearch: $MEILI_URL/health never answered" >&2; exit 1; }
echo "with-meilisearch: Meilisearch at $MEILI_URL (pid $PID)" >&2
set +e
"$@"
rc=$?
set -e
exit $rc
