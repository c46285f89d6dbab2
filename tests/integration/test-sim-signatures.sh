#!/usr/bin/env bash
# The noise model from a signature's own statistics: recorded signatures of real interference
# (tests/data, README there) and ones measured here now are accepted by simulate --signature, and
# one simulated rank loses the share of its time that the file itself measured (total_ns /
# elapsed_ns, or the trace's detours over its "# elapsed_ns"), within 2 % absolute.
set -u
NT=${1:?usage: test-sim-signatures.sh NOISETOOL PYTHON3 DATA_DIR}
PY=${2:?} DATA=${3:?}
. "$(dirname "$0")/../lib.sh"
nt_tmpdir
. "$(dirname "$0")/cli-check.sh"

# measured FILE: the file's own share of time in detours.
measured() {
	"$PY" - "$1" <<'PYEOF'
import json, sys
text = open(sys.argv[1]).read()
if text.lstrip().startswith("{"):
    c = json.loads(text)["cpus"][0]
    print(c["total_ns"] / c["elapsed_ns"])
else:
    busy = last = run = 0
    for line in text.splitlines():
        f = line.split()
        if line.startswith("#"):
            if len(f) >= 3 and f[1] == "elapsed_ns":
                run = int(f[2])
            continue
        if f:
            s, d = int(f[0]), int(f[1])
            busy += d
            last = max(last, s + d)
    print(busy / max(run, last))
PYEOF
}

# check FILE: one rank, 20 s of work in 1 ms pieces, unsynchronized; the simulated share is
# 1 - 1 / magnification.
check() {
	local f=$1 name want got
	name=$(basename "$f")
	timeout -k 2 240 "$NT" simulate --signature "$f" --ranks 1 --collective barrier --unsync \
		--iterations 20000 --compute-us 1000 --json "$tmp/out.json" >/dev/null 2>"$tmp/err" ||
		{ fail "$name: refused: $(cat "$tmp/err")"; return; }
	want=$(measured "$f")
	got=$("$PY" -c 'import json, sys; print(1 - 1 / json.load(open(sys.argv[1]))["results"][0]["magnification"])' "$tmp/out.json")
	echo "$name: measured $want, simulated $got"
	"$PY" -c 'import sys; sys.exit(abs(float(sys.argv[1]) - float(sys.argv[2])) > 0.02)' "$want" "$got" &&
		ok || fail "$name: simulated share $got, measured $want (more than 0.02 apart)"
}

for f in "$DATA"/sig-*.json "$DATA"/sig-*.tsv; do
	check "$f"
done

# Round trip with the real tool: this machine as it is now, --json and --trace of one run.
mapfile -t cpus < <(nt_cpus)
timeout -k 2 60 "$NT" detour --seconds 0.5 --cpu "${cpus[0]}" --json "$tmp/now.json" \
	--trace "$tmp/now.tsv" >/dev/null 2>"$tmp/err" && ok ||
	{ fail "noisetool detour: $(cat "$tmp/err")"; summary; exit; }
grep -q '^# elapsed_ns [0-9]' "$tmp/now.tsv" && ok || fail "the trace does not record the run's length"
"$PY" -c 'import json, sys
c = json.load(open(sys.argv[1]))["cpus"][0]
o = c["other"]
assert o["count"] + sum(p["count"] for p in c["periodic"]) == c["detour_count"], c
assert o["total_ns"] + sum(p["total_ns"] for p in c["periodic"]) == c["total_ns"], c
assert len(o["duration_quantiles_ns"]) <= 32 and len(o["gap_quantiles_ns"]) <= 32, o
' "$tmp/now.json" && ok || fail "now.json: the model's inputs do not add up to the CPU's detours"
check "$tmp/now.json"
check "$tmp/now.tsv"
summary
