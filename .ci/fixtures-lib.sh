# fixtures-lib.sh: shell helpers shared by run.sh and eval.sh for the fixture
# web that `agentfinder fixtures --json` serves. Source it; it defines functions only.

# wait_fixtures PID OUT LOG WHO waits (up to 30 s) until the fixture web with
# PID has printed its JSON line to OUT; on failure it shows LOG and exits.
wait_fixtures() {
	local pid="$1" out="$2" log="$3" who="$4"
	for _ in $(seq 1 300); do
		[[ -s "$out" ]] && return 0
		kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; echo "$who: the fixture web exited" >&2; exit 1; }
		sleep 0.1
	done
	echo "$who: the fixture web printed nothing in 30s" >&2
	exit 1
}

# fixture_args OUT prints the fixture web's crawler flags, its serve flags
# (a demo's) and one --seed per seed from the JSON line in OUT, NUL-separated so paths with spaces survive:
#   mapfile -d '' ARGS < <(fixture_args "$OUT")
fixture_args() {
	node -e '
		const info = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8").split("\n")[0]);
		const out = [...info.flags, ...(info.serveFlags || [])];
		for (const s of info.seeds) out.push("--seed", s);
		process.stdout.write(out.map(a => a + "\0").join(""));
	' "$1"
}

# demo_env ADDR TOKEN DATA BIN [MODEL] prints what make run adds to the
# fixture web's demo.env: its server, admin token and data directory, BIN
# (the directory holding the agentfinder it built) first on PATH, so a shell
# that sources the file runs the README's `agentfinder ...` lines as printed,
# and the embedding model serve uses, so a crawl from any directory embeds
# what it indexes as serve does.
demo_env() {
	echo "# Added by make run: its server, admin token, data directory, agentfinder binary and model."
	printf 'export AGENTFINDER_SERVER=%q\n' "http://$1"
	printf 'export AGENTFINDER_ADMIN_TOKEN=%q\n' "$2"
	printf 'export AGENTFINDER_DATA_DIR=%q\n' "$(cd "$3" && pwd)"
	printf 'export PATH=%q:"$PATH"\n' "$(cd "$4" && pwd)"
	if [[ -n "${5:-}" ]]; then
		printf 'export AGENTFINDER_MODEL_DIR=%q\n' "$(cd "$5" && pwd)"
	fi
}

# running_demo DATA prints "URL PID" of the make run that holds DATA (its
# run.pid names a live process), or nothing.
running_demo() {
	local f="$1/run.pid" pid url
	[[ -s "$f" ]] || return 0
	read -r pid url <"$f" || true
	if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then
		echo "$url $pid"
	fi
}
