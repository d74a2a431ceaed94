#!/usr/bin/env bash
# run.sh is `make run`: the whole of Agent Finder on this machine, with a demo web.
# It starts the fixture web (HTTPS, HTTP and DNS on loopback), then `agentfinder serve`
# on 127.0.0.1:8080 seeded with the fixture seeds and a managed Meilisearch under ./data
# (or the one MEILI_URL names), waits until it answers, writes <data>/demo.env (the
# settings that reach the demo: a shell can source it for agentfinder crawl, validate,
# search and the admin calls), and prints commands to try. Ctrl-C or SIGTERM stops
# everything it started, and a watchdog stops it too if this script is killed outright.
# Needs only bash and node (no curl, jq or python).
set -euo pipefail
cd "$(dirname "$0")/.."
. .ci/fixtures-lib.sh

BIN=./bin/agentfinder
ADDR="${AGENTFINDER_ADDR:-127.0.0.1:8080}"
DATA="${AGENTFINDER_DATA_DIR:-./data}"

# A demo already running on this data directory is left alone: say where it
# is and stop before touching any of its files (--check: only that).
refuse_if_running() {
	local held
	held="$(running_demo "$DATA")"
	if [[ -n "$held" ]]; then
		echo "run: a demo is already running at ${held% *} (pid ${held##* }); stop it first (Ctrl-C in its terminal, or kill ${held##* })" >&2
		exit 1
	fi
}
refuse_if_running
[[ "${1:-}" == "--check" ]] && exit 0
[[ -x "$BIN" ]] || { echo "run: $BIN missing: run 'make run' (it builds first)" >&2; exit 1; }
mkdir -p "$DATA"
# Claim the data directory: run.pid names this script and the demo's URL. A
# second make run started at the same moment loses the noclobber race.
PID_FILE="$DATA/run.pid"
rm -f "$PID_FILE"
if ! (set -C; echo "$$ http://$ADDR/" >"$PID_FILE") 2>/dev/null; then
	refuse_if_running
	echo "run: $PID_FILE appeared while starting; is another make run starting?" >&2
	exit 1
fi

# Meilisearch (managed by serve unless MEILI_URL is set) and the embedding model.
if [[ -z "${MEILI_URL:-}" ]]; then
	AGENTFINDER_MEILI_BIN="$(bash .ci/install-meilisearch.sh)"
	export AGENTFINDER_MEILI_BIN
fi
MODEL_DIR="$(bash .ci/install-model.sh 2>/dev/null || true)"
export AGENTFINDER_ADMIN_TOKEN="${AGENTFINDER_ADMIN_TOKEN:-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')}"

# Children run in their own sessions so Ctrl-C reaches only this script, which then
# stops serve first (it finishes its index writes) and the fixture web last.
DETACH=()
if command -v setsid >/dev/null 2>&1; then DETACH=(setsid); fi
FIX_PID=""
SERVE_PID=""
ENV_FILE="$DATA/demo.env"
cleanup() {
	trap - EXIT INT TERM
	if [[ -n "$SERVE_PID" ]] && kill -0 "$SERVE_PID" 2>/dev/null; then
		kill -TERM "$SERVE_PID" 2>/dev/null || true
		wait "$SERVE_PID" 2>/dev/null || true
	fi
	if [[ -n "$FIX_PID" ]] && kill -0 "$FIX_PID" 2>/dev/null; then
		kill -TERM "$FIX_PID" 2>/dev/null || true
		wait "$FIX_PID" 2>/dev/null || true
	fi
	rm -f "$ENV_FILE" "$PID_FILE"
	echo "run: stopped (log: ${LOG:-none})" >&2
}
trap cleanup EXIT
# Ctrl-C and SIGTERM are the normal way to stop the demo: a clean stop exits 0.
trap 'exit 0' INT TERM

# watchdog PID... stops the given processes once this script is gone, however it
# ended (even SIGKILL, which runs no trap). It runs in its own session.
watchdog() {
	"${DETACH[@]}" bash -c 'while kill -0 "$1" 2>/dev/null; do sleep 1; done; shift; kill -TERM "$@" 2>/dev/null' \
		watchdog $$ "$@" </dev/null >/dev/null 2>&1 &
}

# 1. The fixture web. Its first stdout line is JSON: flags and seeds for a crawler.
FIX_OUT="$DATA/fixtures.out"
: >"$FIX_OUT"
rm -f "$ENV_FILE"
"${DETACH[@]}" "$BIN" fixtures --json --demo --env-file "$ENV_FILE" >"$FIX_OUT" 2>"$DATA/fixtures.log" &
FIX_PID=$!
watchdog "$FIX_PID"
wait_fixtures "$FIX_PID" "$FIX_OUT" "$DATA/fixtures.log" run
mapfile -d '' SERVE_ARGS < <(fixture_args "$FIX_OUT")

# 2. serve.
MODEL_ARGS=()
if [[ -n "$MODEL_DIR" ]]; then MODEL_ARGS=(--model-dir "$MODEL_DIR"); fi
LOG="$DATA/serve.log"
echo "run: starting agentfinder serve on $ADDR (log: $LOG)" >&2
"${DETACH[@]}" "$BIN" serve --addr "$ADDR" --data-dir "$DATA" "${MODEL_ARGS[@]}" "${SERVE_ARGS[@]}" >>"$LOG" 2>&1 &
SERVE_PID=$!
watchdog "$SERVE_PID"

# 3. Wait until it answers /readyz.
ready() {
	node -e 'require("http").get(process.argv[1], r => process.exit(r.statusCode === 200 ? 0 : 1)).on("error", () => process.exit(1))' "http://$ADDR/readyz"
}
for _ in $(seq 1 600); do
	ready && break
	kill -0 "$SERVE_PID" 2>/dev/null || { tail -n 30 "$LOG" >&2; echo "run: agentfinder serve exited; log: $LOG" >&2; exit 1; }
	sleep 0.2
done
ready || { echo "run: http://$ADDR/readyz did not answer in 120s" >&2; exit 1; }

# The fixture web gets new ports and a new CA on every run: recrawl everything now even if
# ./data says the seeds were crawled recently.
node -e '
	const r = require("http").request(process.argv[1], {method: "POST", headers: {Authorization: "Bearer " + process.argv[2]}},
		res => process.exit(res.statusCode === 202 ? 0 : 1));
	r.on("error", () => process.exit(1)); r.end();
' "http://$ADDR/admin/crawl" "$AGENTFINDER_ADMIN_TOKEN" || echo "run: could not trigger the crawl (POST /admin/crawl)" >&2

# The settings that reach this demo, for a shell to source: the fixture web wrote its
# own (DNS server, CA file, port map, seeds); add the server, its admin token and data.
demo_env "$ADDR" "$AGENTFINDER_ADMIN_TOKEN" "$DATA" "$(dirname "$BIN")" "$MODEL_DIR" >>"$ENV_FILE"

cat <<EOF

  Search page: http://$ADDR/   (about this registry: http://$ADDR/about)

  Agent Finder is running on http://$ADDR/ and crawling the fixture web and walking its MCP
  registry (real MCP servers; a few seconds; its deliberately broken hosts take a little longer).
    log:          tail -f $LOG
    data:         $DATA (Meilisearch, scheduler state)
    admin token:  $AGENTFINDER_ADMIN_TOKEN
    demo env:     . $ENV_FILE   (the demo web's DNS server, CA file and port map, the admin
                  token and the server URL, for agentfinder crawl, validate and search)

  Try:
    curl -s http://$ADDR/search -H 'Content-Type: application/json' \\
      -d '{"query": {"text": "why is my kubernetes deployment crashlooping", "federation": "none"}, "pageSize": 5}'
    curl -s http://$ADDR/search -H 'Content-Type: application/json' \\
      -d '{"query": {"text": "book a flight", "type": "application/a2a-agent-card+json"}}'
    curl -s http://$ADDR/search -H 'Content-Type: application/json' \\
      -d '{"query": {"text": "crypto news for bitcoin traders", "federation": "none"}, "pageSize": 3}'
                  (real A2A agents: bare cards found at /.well-known/agent-card.json)
    curl -s 'http://$ADDR/agents?pageSize=5&orderBy=displayName'
    curl -s http://$ADDR/search -H 'Content-Type: application/json' \\
      -d '{"query": {"text": "read and write airtable records", "type": "application/mcp-server+json", "federation": "none"}}'
    curl -s 'http://$ADDR/agents/io.github.domdomegg%2Fairtable-mcp-server'   (an MCP server from the fixture registry)
    curl -s 'http://$ADDR/agents/urn%3Aai%3Aacme.test%3Aplatform%3Ak8s-ops'
    curl -s http://$ADDR/.well-known/ai-catalog.json
    curl -s http://$ADDR/readyz
    curl -s http://$ADDR/admin/status -H "Authorization: Bearer $AGENTFINDER_ADMIN_TOKEN"
    curl -s -X POST http://$ADDR/admin/crawl -H "Authorization: Bearer $AGENTFINDER_ADMIN_TOKEN"

    $BIN search --server http://$ADDR kubernetes pod logs
    $BIN search --server http://$ADDR --publisher acme.test --federation none expense report
    $BIN search --server http://$ADDR --json book a flight

    . $ENV_FILE
    $BIN crawl --seed acme.test
    $BIN validate https://acme.test/.well-known/ai-catalog.json
    curl -s \$AGENTFINDER_SERVER/admin/status -H "Authorization: Bearer \$AGENTFINDER_ADMIN_TOKEN"

  Ctrl-C (or SIGTERM) stops serve, Meilisearch and the fixture web.

EOF
wait "$SERVE_PID"
