#!/usr/bin/env bash
# eval.sh is `make eval`: the relevance set of fixtures/relevance end to end.
# It serves the set's catalogs as a fixture web (HTTPS + DNS on loopback),
# with two more hosts publishing the real MCP registry servers and A2A cards
# of fixtures/realworld as inline entries (distractors: real agents that
# answer none of the set's requests), runs three `agentfinder serve`
# instances against one throwaway Meilisearch (three indexes): the default
# configuration (embeddings + query rewriting: the query vector of the text
# as typed fused with one keyword query per informative term, semantic ratio
# 0.8) over the set alone, a keyword-only one (--no-embeddings: the same term
# fusion without the vector) over the set alone, and the default one over the
# set with the distractors, waits until each has crawled and indexed every
# entry, then scores each with the set's
# scorer (fixtures/relevance/score: Recall@1/5/10, MRR@10, nDCG@10,
# precision@5, the documents in the top 10 of the most requests, the top-1
# score AUC, off-catalog requests left empty, latency) with the
# cut-off on and off, one after the other so their latencies do not
# compete, and ends with the latency the relevance stage adds. Needs bash, go and
# node; `make eval` builds, fetches the model and installs Meilisearch first.
#
# Environment: AGENTFINDER_RELEVANCE_DIR (default fixtures/relevance),
# AGENTFINDER_MODEL_DIR (default ./.cache/model), EVAL_TIMEOUT seconds to wait
# for indexing (default 300), EVAL_EXTRA_ARGS extra serve flags for the
# default runs (e.g. "--semantic-ratio 0.7"), EVAL_INPROCESS=0 to skip the
# in-process harness, EVAL_LATENCY=0 to skip the relevance stage's latency,
# EVAL_KEYWORD=0 to skip the keyword-only run, EVAL_TOOLS=0 to skip the
# tool-level requests.
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

# 1. The fixture web over the relevance catalogs and the distractor hosts.
ROOT="$WORK/root"
mkdir -p "$ROOT"
cp -R "$REL"/catalogs/. "$ROOT"/
DISTRACTORS="$("${GO:-go}" run ./fixtures/relevance/distractors --realworld fixtures/realworld --root "$ROOT")"
"$BIN" fixtures --json --no-world --root "$ROOT" >"$WORK/fixtures.out" 2>"$WORK/fixtures.log" &
PIDS+=($!)
wait_fixtures "${PIDS[0]}" "$WORK/fixtures.out" "$WORK/fixtures.log" eval
mapfile -d '' ALL_ARGS < <(fixture_args "$WORK/fixtures.out")
# The set alone: the same flags without the distractor hosts' seeds.
FIX_ARGS=()
for ((i = 0; i < ${#ALL_ARGS[@]}; i++)); do
	if [[ "${ALL_ARGS[i]}" == "--seed" && "${ALL_ARGS[i + 1]}" =~ (mcp-registry|a2a-cards)\.eval\.test ]]; then
		i=$((i + 1))
		continue
	fi
	FIX_ARGS+=("${ALL_ARGS[i]}")
done

# 2. Two serve instances: default (hybrid + rewrite) and keyword only.
SUFFIX="$(head -c 4 /dev/urandom | od -An -tx1 | tr -d ' \n')"
start_serve() { # name port world(set|all) extra-args...
	local name="$1" port="$2" world="$3"
	shift 3
	local args=("${FIX_ARGS[@]}")
	[[ "$world" == all ]] && args=("${ALL_ARGS[@]}")
	mkdir -p "$WORK/$name"
	"$BIN" serve --addr "127.0.0.1:$port" --data-dir "$WORK/$name" --index "eval_${name}_$SUFFIX" \
		--meili-url "$MEILI_URL" --model-dir "$MODEL_DIR" --schedule "@every 24h" --rate-limit 0 \
		"$@" "${args[@]}" >"$WORK/$name.log" 2>&1 &
	PIDS+=($!)
}
PORT_H="$(freeport)"
PORT_K="$(freeport)"
PORT_D="$(freeport)"
# shellcheck disable=SC2086
start_serve hybrid "$PORT_H" set ${EVAL_EXTRA_ARGS:-}
# shellcheck disable=SC2086
start_serve distractors "$PORT_D" all ${EVAL_EXTRA_ARGS:-}
[[ "${EVAL_KEYWORD:-1}" == "1" ]] && start_serve keyword "$PORT_K" set --no-embeddings

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
wait_indexed() { # name port want
	local name="$1" port="$2" want="$3" last=-1 stable=0 n
	for _ in $(seq 1 "$TIMEOUT"); do
		n="$(total "$port")"
		if [[ "$n" -ge "$want" && "$want" -gt 0 ]]; then echo "eval: $name indexed $n entries" >&2; return 0; fi
		if [[ "$n" == "$last" && "$n" -gt 0 ]]; then stable=$((stable + 1)); else stable=0; fi
		# Accept a count that has not moved for 60 s (the crawl is over).
		if [[ "$stable" -ge 60 ]]; then echo "eval: $name indexed $n entries (reachable: $want)" >&2; return 0; fi
		last="$n"
		sleep 1
	done
	echo "eval: $name did not finish indexing in ${TIMEOUT}s ($n of $want); its log:" >&2
	tail -30 "$WORK/$name.log" >&2
	return 1
}
wait_indexed hybrid "$PORT_H" "$WANT"
wait_indexed distractors "$PORT_D" "$((WANT + DISTRACTORS))"
[[ "${EVAL_KEYWORD:-1}" == "1" ]] && wait_indexed keyword "$PORT_K" "$WANT"
for name in hybrid distractors; do
	if grep -qi "keyword search only\|model files" "$WORK/$name.log"; then
		echo "eval: warning: the $name run says embeddings are off:" >&2
		grep -i "keyword search only\|model files" "$WORK/$name.log" | head -3 >&2
	fi
done

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
score "default with $DISTRACTORS distractors (the realworld MCP registry servers and A2A cards) ${EVAL_EXTRA_ARGS:-}" "$PORT_D"
[[ "${EVAL_KEYWORD:-1}" == "1" ]] && score "keyword only (--no-embeddings: term fusion without the vector)" "$PORT_K"

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

# 5b. Tool-level requests (searchapi/search/tooleval_test.go): the set's entries as
# the tools of one MCP server per publisher, Recall@1/@10 of the server
# holding each request's tool, with the tool index and without it.
# EVAL_TOOLS=0 skips it.
if [[ "${EVAL_TOOLS:-1}" == "1" ]]; then
	echo
	echo "== tool-level requests (the tool index)"
	AGENTFINDER_TOOL_EVAL=1 AGENTFINDER_RELEVANCE_DIR="$(cd "$REL" && pwd)" AGENTFINDER_MODEL_DIR="$(cd "$MODEL_DIR" && pwd)" \
		"${GO:-go}" test -count=1 -run TestToolEval -v ./searchapi/search 2>&1 | grep -E '^tool eval' || true
fi

# 6. What the relevance stage (re-ranking and scoring, searchapi/score)
# adds to a search, measured against the ranking before it in the same run
# (searchapi/search/relevance_eval_test.go).
[[ "${EVAL_LATENCY:-1}" == "1" ]] || exit 0
echo
echo "== latency of the relevance stage (same run, alternating)"
AGENTFINDER_EVAL=1 AGENTFINDER_RELEVANCE_DIR="$(cd "$REL" && pwd)" AGENTFINDER_MODEL_DIR="$(cd "$MODEL_DIR" && pwd)" \
	"${GO:-go}" test -count=1 -run TestRelevanceLatency -v ./searchapi/search 2>&1 | grep -E '^relevance stage' || true
