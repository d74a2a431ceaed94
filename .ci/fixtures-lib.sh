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

# fixture_args OUT prints the fixture web's crawler flags and one --seed per
# seed from the JSON line in OUT, NUL-separated so paths with spaces survive:
#   mapfile -d '' ARGS < <(fixture_args "$OUT")
fixture_args() {
	node -e '
		const info = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8").split("\n")[0]);
		const out = [...info.flags];
		for (const s of info.seeds) out.push("--seed", s);
		process.stdout.write(out.map(a => a + "\0").join(""));
	' "$1"
}
