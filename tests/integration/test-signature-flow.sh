#!/usr/bin/env bash
# Signatures measured here (detour and ftq, --json and --trace, one CPU and all) fed to simulate
# --signature: accepted, repeatable, and simulating exactly the detours the files hold (worked out
# by sim-expect.py from the files alone), so the machine's noise never decides the outcome.
set -u
NT=${1:?usage: test-signature-flow.sh NOISETOOL PYTHON3 SIM-EXPECT.PY}
PY=${2:?} EXPECT=${3:?}
. "$(dirname "$0")/../lib.sh"
nt_tmpdir
. "$(dirname "$0")/cli-check.sh"

mapfile -t cpus < <(nt_cpus)
cpu=${cpus[0]}

# jget FILE EXPR: EXPR of the JSON document j in FILE (Python).
jget() { "$PY" -c "import json, sys; j = json.load(open(sys.argv[1])); print($2)" "$1"; }

# Signatures of this machine as it is now.
measure() {
	timeout -k 2 60 "$NT" "$@" >"$tmp/out" 2>"$tmp/err" && ok ||
		{ fail "noisetool $*: exit $?"; cat "$tmp/err"; }
}
measure detour --seconds 0.5 --cpu "$cpu" --json "$tmp/d.json" --trace "$tmp/d.tsv"
measure ftq --seconds 0.5 --cpu "$cpu" --json "$tmp/f.json" --trace "$tmp/f.tsv"
measure detour --seconds 0.5 --cpu all --json "$tmp/a.json" --trace "$tmp/a.tsv"
# The JSON and the trace of one run describe the same detours: count, total and longest.
for x in d f; do
	[ "$(jget "$tmp/$x.json" '"%d %d %d" % (j["cpus"][0]["detour_count"], j["cpus"][0]["total_ns"], j["cpus"][0]["max_ns"])')" = \
		"$(awk '!/^#/ { n++; t += $2; if ($2 > m) m = $2 } END { printf "%d %d %d", n, t, m }' "$tmp/$x.tsv")" ] &&
		ok || fail "$x.json's detour_count, total_ns, max_ns differ from $x.tsv"
done
# --cpu all: one entry per CPU of the affinity mask; one trace, or FILE.cpuN for several CPUs.
[ "$(jget "$tmp/a.json" '" ".join(str(c["cpu"]) for c in j["cpus"])')" = "${cpus[*]}" ] && ok ||
	fail "--cpu all measured $(jget "$tmp/a.json" '[c["cpu"] for c in j["cpus"]]'), not ${cpus[*]}"
if [ ${#cpus[@]} -eq 1 ]; then
	atraces=$tmp/a.tsv
else
	atraces=$(printf "$tmp/a.tsv.cpu%s," "${cpus[@]}")
	atraces=${atraces%,}
fi
# One time axis for the run: each CPU's start_offset_ns after the earliest (which has 0), the
# same in its trace ("# start_offset_ns N", absent for 0).
[ "$(jget "$tmp/a.json" 'min(c["start_offset_ns"] for c in j["cpus"])')" = 0 ] && ok ||
	fail "--cpu all: no CPU at start_offset_ns 0: $(jget "$tmp/a.json" '[c["start_offset_ns"] for c in j["cpus"]]')"
i=0
for tr in ${atraces//,/ }; do
	want=$(jget "$tmp/a.json" "j['cpus'][$i]['start_offset_ns']")
	got=$(awk '$1 == "#" && $2 == "start_offset_ns" { print $3 }' "$tr")
	[ "${got:-0}" = "$want" ] && ok || fail "$tr: start_offset_ns ${got:-absent}, the JSON's is $want"
	i=$((i + 1))
done
for x in d f a; do
	echo "$x.json: $(jget "$tmp/$x.json" '"; ".join("CPU %d: %d detours, noise %.3f, %d periodic, %d rare" % (c["cpu"], c["detour_count"], c["noise_ratio"], len(c["periodic"]), c["rare_long"]["count"]) for c in j["cpus"])')"
done
for v in combs zero rare legacy; do
	for x in d f a; do
		"$PY" "$EXPECT" variant "$tmp/$x.json" "$tmp/$x-$v.json" $v || fail "variant $x $v"
	done
done

# flow NAME RANKS ITERATIONS COMPUTE_US FILES: simulate --sync with free messages (--loggp
# 0,0,0,0, so that the last rank's finish is that of its own work), twice, and what sim-expect.py
# says of it: refused with one line naming the problem, or the noise-free time, the events of
# the barrier loop, the noisy time exactly or within its bounds, the magnification, the same
# results again.
flow() {
	local name=$1 ranks=$2 iter=$3 us=$4 sig=$5 rc files
	local args=(--ranks "$ranks" --collective barrier --signature "$sig" --sync
		    --iterations "$iter" --compute-us "$us" --loggp 0,0,0,0)
	timeout -k 2 120 "$NT" simulate "${args[@]}" --json "$tmp/$name.sim.json" >/dev/null 2>"$tmp/err"
	rc=$?
	cp "$tmp/$name.sim.json" "$tmp/$name.again.sim.json" 2>/dev/null
	[ $rc -eq 0 ] && timeout -k 2 120 "$NT" simulate "${args[@]}" --json "$tmp/$name.again.sim.json" \
		>/dev/null 2>&1
	IFS=, read -r -a files <<<"$sig"
	"$PY" "$EXPECT" check "$iter" "$us" "$ranks" $rc "$tmp/err" "$tmp/$name.sim.json" \
		"$tmp/$name.again.sim.json" "${files[@]}" >"$tmp/problems" && ok ||
		{ fail "$name: $(tr '\n' ';' <"$tmp/problems")"; }
}

# Traces, and the combs alone: exact. No detours: no slowdown at all. Everything: within bounds.
for x in d f; do
	flow $x-trace 1 20 50000 "$tmp/$x.tsv"
	flow $x-combs 1 20 50000 "$tmp/$x-combs.json"
	flow $x-combs-pieces 1 7 33333 "$tmp/$x-combs.json"
	flow $x-zero 1 20 50000 "$tmp/$x-zero.json"
	[ "$(jget "$tmp/$x-zero.sim.json" 'j["results"][0]["magnification"] == 1')" = True ] && ok ||
		fail "$x-zero: a signature without detours magnifies"
	flow $x-full 1 20 50000 "$tmp/$x-legacy.json"
done

# The Poisson detours at the files' rate: the work gets the share of time no detour covers,
# e^-ratio (Poisson arrivals, any lengths), so the run takes W e^ratio. With 3 10^5 E[d^2]/E[d]^2
# arrivals, ln(magnification) / ratio is 1 within 5 %: at 10^5 it was 0.994 to 1.002 (12 runs:
# 4 detour signatures on this VM under load, ratio 0.2 to 0.75, seeds 1 to 3, sd 0.0025).
for x in d f; do
	"$PY" "$EXPECT" finish 1 1 0 "$tmp/$x-rare.json" >"$tmp/$x-rare.expect"
	read -r rate ratio cv2 < <(jget "$tmp/$x-rare.expect" \
		'"%r %r %r" % (j.get("rare_rate_hz", 0), j.get("rare_ratio", 0), j.get("rare_cv2", 0))')
	echo "$x: Poisson detours at $rate Hz, noise ratio $ratio, E[d^2]/E[d]^2 $cv2"
	if [ "$(jget "$tmp/$x-rare.expect" 'j.get("rare_rate_hz", 0) > 0')" = True ]; then
		us=$("$PY" -c "import math; print(math.ceil(max(3e4, 3e5 * $cv2) * 1e3 / $rate))")
		flow $x-rare 1 1000 "$us" "$tmp/$x-rare.json"
		"$PY" -c 'import json, math, sys
m, rho = json.load(open(sys.argv[1]))["results"][0]["magnification"], float(sys.argv[2])
assert 0.95 <= math.log(m) / rho <= 1.05, (m, rho, math.exp(rho))
' "$tmp/$x-rare.sim.json" "$ratio" && ok || fail "$x-rare: magnification against e^$ratio"
	else
		flow $x-rare 1 20 50000 "$tmp/$x-rare.json"
	fi
done

# Every CPU: one model per CPU, rank r on model r mod n; with n ranks the last to finish. The
# CPU that delays the work least comes first, so that every rank on model 0 would show.
n=${#cpus[@]}
flow all-traces "$n" 1 1000000 "$("$PY" "$EXPECT" quiet-first 1000000000 "$atraces")"
"$PY" "$EXPECT" quiet-first 1000000000 "$tmp/a-combs.json" "$tmp/a-combs-sorted.json"
flow all-combs "$n" 1 1000000 "$tmp/a-combs-sorted.json"
flow all-full "$n" 1 1000000 "$tmp/a-legacy.json"

# As the README runs it: many ranks, real LogGP, unsynchronized, one seed twice.
scale() {
	local name=$1 sig=$2
	local args=(--ranks 1024 --collective allreduce --signature "$sig" --unsync --seed 5
		    --iterations 10 --compute-us 1000)
	timeout -k 2 120 "$NT" simulate "${args[@]}" --json "$tmp/$name.sim.json" >/dev/null 2>"$tmp/err"
	local rc=$?
	"$PY" "$EXPECT" finish 0 1 0 ${sig//,/ } >"$tmp/$name.expect"
	if [ "$(jget "$tmp/$name.expect" 'j["feasible"]')" = False ]; then
		[ $rc -eq 2 ] && ok || fail "$name: refusal expected, exit $rc"
		return
	fi
	[ $rc -eq 0 ] || { fail "$name: exit $rc"; cat "$tmp/err"; return; }
	timeout -k 2 120 "$NT" simulate "${args[@]}" --json "$tmp/$name.again.sim.json" >/dev/null 2>&1
	cmp -s <(grep -v -e '"events_per_s"' -e '"seconds"' "$tmp/$name.sim.json") \
		<(grep -v -e '"events_per_s"' -e '"seconds"' "$tmp/$name.again.sim.json") && ok ||
		fail "$name: a second run differs"
	# allreduce at 2^10 ranks: 2 P log2 P message events and P compute phases per iteration.
	"$PY" -c 'import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
assert r["events"] == 10 * (2 * 1024 * 10 + 1024), r
assert r["time_ns_noisy"] >= r["time_ns_noise_free"] and r["magnification"] >= 1, r
if sys.argv[2] == "zero":
	assert r["time_ns_noisy"] == r["time_ns_noise_free"], r
'  "$tmp/$name.sim.json" "$3" && ok || fail "$name: $(cat "$tmp/$name.sim.json")"
}
scale scale-detour "$tmp/d.json" noise
scale scale-ftq "$tmp/f.json" noise
scale scale-all "$tmp/a.json" noise
scale scale-traces "$atraces" noise
scale scale-zero "$tmp/a-zero.json" zero

summary
