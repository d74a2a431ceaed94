#!/usr/bin/env bash
# eval.sh is `make eval`: the relevance set of fixtures/relevance end to end.
# It serves the set's catalogs as a fixture web (HTTPS + DNS on loopback), runs
# two `agentfinder serve` instances against one throwaway Meilisearch (two
# indexes): the default configuration (embeddings + query rewriting: the
# query vector of the text as typed fused with one keyword query per
# informative term, semantic ratio 0.8) and a keyword-only one
# (--no-embeddings: the same term fusion without the vector), waits until
# both have crawled and indexed every entry, then scores each with the set's
# scorer (fixtures/relevance/score: Recall@1/5/10, MRR@10, nDCG@10, the
# top-1 score AUC, off-catalog requests left empty, latency) with the
# cut-off on and off, one after the other so their latencies do not
# compete, and ends with the latency the relevance stage adds. Needs bash, go and
# node; `make eval` builds, fetches the model and installs Meilisearch first.
#
# Environment: AGENTFINDER_RELEVANCE_DIR (default fixtures/relevance),
# AGENTFINDER_MODEL_DIR (default ./.cache/model), EVAL_TIMEOUT seconds to wait
# for indexing (default 300), EVAL_EXTRA_ARGS extra serve flags for the
# default run (e.g. "--semantic-ratio 0.7"), EVAL_INPROCESS=0 to skip the
# in-process harness.
set -euo pipefail
cd "$(dirname "$0")/.."
. .ci/fixtures-lib.sh

# A throwaway Meilisearch unless MEILI_URL names one.
if [[ -z "${MEILI_URL:-}" ]]; then
	exec bash .ci/with-meilisearch.sh bash "$0" "$@"
fi

BIN=./bin/agentfinder
REL="${AGENTFINDER_RELEVANCE_DIR:-fixtures/relevance}"
MODEL_DIR="${AGENTFINDER_MODEL_DIR:-./.cache/model}"
TIMEOUT="${EVAL_TIMEOUT:-300}"
[[ -x "$BIN" ]] || { echo "eval: $BIN missing: run 'make eval' (it builds first)" >&2; exit 1; }
[[ -f "$REL/dev_queries.jsonl" ]] || { echo "eval: no relevance set at $REL" >&2; exit 1; }
REL="$(cd "$REL" && pwd)"
WORK="$(mktemp -d -t agentfinder-eval-XXXXXX)"
PIDS=()
cleanup() {
	trap - EXIT INT TERM
	for pid in "${PIDS[@]}"; do
		if kill -0 "$pid" 2>/dev/null; then
			kill -TERM "$pid" 2>/dev/null || true
			wait "$pid" 2>/dev/null || true
		fi
	done
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

freeport() { node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }

SCORE="$WORK/score"
"${GO:-go}" build -o "$SCORE" ./fixtures/relevance/score

# 1. The fixture web over the relevance catalogs only.
"$BIN" fixtures --json --no-world --root "$REL/catalogs" >"$WORK/fixtures.out" 2>"$WORK/fixtures.log" &
PIDS+=($!)
wait_fixtures "${PIDS[0]}" "$WORK/fixtures.out" "$WORK/fixtures.log" eval
mapfile -d '' FIX_ARGS < <(fixture_args "$WORK/fixtures.out")

# 2. Two serve instances: default (hybrid + rewrite) and keyword only.
SUFFIX="$(head -c 4 /dev/urandom | od -An -tx1 | tr -d ' \n')"
start_serve() { # name port extra-args...
	local name="$1" port="$2"
	shift 2
	mkdir -p "$WORK/$name"
	"$BIN" serve --addr "127.0.0.1:$port" --data-dir "$WORK/$name" --index "eval_${name}_$SUFFIX" \
		--meili-url "$MEILI_URL" --model-dir "$MODEL_DIR" --schedule "@every 24h" --rate-limit 0 \
		"$@" "${FIX_ARGS[@]}" >"$WORK/$name.log" 2>&1 &
	PIDS+=($!)
}
PORT_H="$(freeport)"
PORT_K="$(freeport)"
# shellcheck disable=SC2086
start_serve hybrid "$PORT_H" ${EVAL_EXTRA_ARGS:-}
start_serve keyword "$PORT_K" --no-embeddings

# 3. Wait until each has indexed every entry the set can reach (the count of
# GET /agents stops growing at the number of tools in reachability.json).
WANT="$(node -e 'console.log((JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).entries || []).length)' "$REL/reachability.json")"
total() { # port
	node -e '
		const r = require("http").get(process.argv[1], {timeout: 5000}, res => {
			let b = ""; res.on("data", d => b += d);
			res.on("end", () => { try { console.log(JSON.parse(b).total || 0) } catch { console.log(0) } });
		});
		r.on("error", () => console.log(0)); r.on("timeout", () => r.destroy());
	' "http://127.0.0.1:$1/agents?pageSize=1"
}
wait_indexed() { # name port
	local name="$1" port="$2" last=-1 stable=0 n
	for _ in $(seq 1 "$TIMEOUT"); do
		n="$(total "$port")"
		if [[ "$n" -ge "$WANT" && "$WANT" -gt 0 ]]; then echo "eval: $name indexed $n entries" >&2; return 0; fi
		if [[ "$n" == "$last" && "$n" -gt 0 ]]; then stable=$((stable + 1)); else stable=0; fi
		# Accept a count that has not moved for 60 s (the crawl is over).
		if [[ "$stable" -ge 60 ]]; then echo "eval: $name indexed $n entries (reachable: $WANT)" >&2; return 0; fi
		last="$n"
		sleep 1
	done
	echo "eval: $name did not finish indexing in ${TIMEOUT}s ($n of $WANT); its log:" >&2
	tail -30 "$WORK/$name.log" >&2
	return 1
}
wait_indexed hybrid "$PORT_H"
wait_indexed keyword "$PORT_K"
if grep -qi "keyword search only\|model files" "$WORK/hybrid.log"; then
	echo "eval: warning: the default run says embeddings are off:" >&2
	grep -i "keyword search only\|model files" "$WORK/hybrid.log" | head -3 >&2
fi

# 4. Score, one configuration at a time: with the server's default cut-off
# (and the off-catalog requests, which should come back empty), then with
# the cut-off off (minScore 0: every request has a first result, the top-1
# score AUC compares them all).
score() { # title port
	echo
	echo "== $1"
	"$SCORE" --url "http://127.0.0.1:$2/search" --queries "$REL/dev_queries.jsonl" --k 10 --warmup 10 \
		--off-catalog "$REL/offcatalog.jsonl"
	echo "-- the same with the cut-off off (minScore 0)"
	"$SCORE" --url "http://127.0.0.1:$2/search" --queries "$REL/dev_queries.jsonl" --k 10 --min-score 0
}
score "default: embeddings + query rewriting (term fusion, semantic ratio 0.8) ${EVAL_EXTRA_ARGS:-}" "$PORT_H"
score "keyword only (--no-embeddings: term fusion without the vector)" "$PORT_K"

# 5. The in-process tuning harness (searchapi/query/eval_test.go) on the same
# Meilisearch: native hybrid against term fusion, the parameter choices behind
# the defaults; "rewrite, frequency" is the keyword-only path searchapi used
# before term fusion. EVAL_INPROCESS=0 skips it.
if [[ "${EVAL_INPROCESS:-1}" == "1" ]]; then
	echo
	echo "== in-process harness (query shapes measured directly against Meilisearch)"
	AGENTFINDER_EVAL=1 AGENTFINDER_RELEVANCE_DIR="$REL" AGENTFINDER_MODEL_DIR="$(cd "$MODEL_DIR" && pwd)" \
		"${GO:-go}" test -count=1 -run TestRelevanceEval -v ./searchapi/query 2>&1 | grep -E '^(index|entry|query embedding)' || true
fi

# 6. What the relevance stage (re-ranking and scoring, searchapi/score)
# adds to a search, measured against the ranking before it in the same run
# (searchapi/relevance_eval_test.go).
echo
echo "== latency of the relevance stage (same run, alternating)"
AGENTFINDER_EVAL=1 AGENTFINDER_RELEVANCE_DIR="$(cd "$REL" && pwd)" AGENTFINDER_MODEL_DIR="$(cd "$MODEL_DIR" && pwd)" \
	"${GO:-go}" test -count=1 -run TestRelevanceLatency -v ./searchapi 2>&1 | grep -E '^relevance stage' || true
