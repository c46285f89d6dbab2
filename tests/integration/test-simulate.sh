#!/usr/bin/env bash
# The command-line contract of noisetool simulate: help, the table and JSON shapes, identical
# results from two runs with one seed, signature files (JSON and TSV), exit 2 on bad arguments
# (one line on stderr), exit 1 on an unreadable file or output.
set -u
NT=${1:?usage: test-simulate.sh path/to/noisetool}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/cli-check.sh"

# expect_sim RC ARGS...: `noisetool simulate ARGS` exits RC with one line on stderr.
expect_sim() {
	local rc=$1
	shift
	expect_status "$rc" "$NT" simulate "$@"
}

"$NT" simulate --help >"$tmp/out" 2>&1 && grep -q "Usage: noisetool simulate" "$tmp/out" && ok ||
	fail "simulate --help"
"$NT" --help | grep -q simulate && ok || fail "noisetool --help lists simulate"

base=(--collective allreduce --noise freq=1kHz,period=25us)
expect_sim 2
expect_sim 2 --ranks 1024 --collective allreduce --unsync
expect_sim 2 --ranks 1024 "${base[@]}"
expect_sim 2 --ranks 1024 "${base[@]}" --sync --unsync
expect_sim 2 --ranks 0 "${base[@]}" --sync
expect_sim 2 --ranks 5-3 "${base[@]}" --sync
expect_sim 2 --ranks 2^31 "${base[@]}" --sync
expect_sim 2 --ranks 1024, "${base[@]}" --sync
expect_sim 2 --ranks 1024 --collective scatter --noise freq=1kHz,period=25us --sync
expect_sim 2 --ranks 1024 --collective allreduce --noise freq=1kHz --sync
expect_sim 2 --ranks 1024 --collective allreduce --noise freq=1kHz,period=2ms --sync
expect_sim 2 --ranks 1024 --collective allreduce --noise freq=1kHz,period=1xs --sync
expect_sim 2 --ranks 1024 "${base[@]}" --signature x.json --sync
expect_sim 2 --ranks 1024 "${base[@]}" --sync --algorithm ring
expect_sim 2 --ranks 65536 --collective alltoall --algorithm ring --noise freq=1kHz,period=25us --sync
expect_sim 2 --ranks 1024 "${base[@]}" --sync --loggp 1,2,3
expect_sim 2 --ranks 1024 "${base[@]}" --sync --iterations 0
expect_sim 2 --ranks 1024 "${base[@]}" --sync --bogus
"$NT" simulate --ranks 65536 --collective alltoall --algorithm ring "${base[@]:2}" --sync 2>&1 |
	grep -q "O(P^2)" && ok || fail "the ring refusal says why"

# Table: a header and one row per rank count, ascending.
"$NT" simulate --ranks 4096,1024,2^11 "${base[@]}" --unsync --seed 3 >"$tmp/table" 2>"$tmp/err"
[ $? -eq 0 ] && ok || { fail "table run"; cat "$tmp/err"; }
grep -q "magnif" "$tmp/table" && ok || fail "table header"
[ "$(awk '$1 ~ /^[0-9]+$/ && NF == 8 { print $1 }' "$tmp/table" | tr '\n' ' ')" = "1024 2048 4096 " ] &&
	ok || { fail "table rows"; cat "$tmp/table"; }

# Threads: each round's rank ranges on 1 or 3 threads give the same results (65536 ranks: enough
# to shard), with a signature model (partly hit combs, renewal, per-rank state); the table and
# the JSON say how many threads ran.
sig=$(dirname "$0")/../data/sig-long3s.json
for th in 1 3; do
	"$NT" simulate --ranks 2^10,2^16 --collective allreduce --signature "$sig" --unsync \
		--compute-us 100 --iterations 2 --threads $th --json "$tmp/th$th.json" >"$tmp/th$th.txt" 2>&1 &&
		ok || { fail "--threads $th"; cat "$tmp/th$th.txt"; }
	sed -E 's/"(events_per_s|seconds|threads)": [0-9.e+]+,? ?//g' "$tmp/th$th.json" >"$tmp/th$th.cmp"
done
cmp -s "$tmp/th1.cmp" "$tmp/th3.cmp" && ok || fail "the same results on 1 and 3 threads"
[ "$(grep -o '"threads": [0-9]*' "$tmp/th3.json" | tr '\n' ' ')" = '"threads": 1 "threads": 3 ' ] &&
	ok || fail "JSON threads: 1 for 2^10 ranks (too few to shard), 3 for 2^16"
[ "$(awk '$1 == 65536 { print $8 }' "$tmp/th3.txt")" = 3 ] && ok || fail "table threads column"
expect_sim 2 --ranks 1024 "${base[@]}" --sync --threads 0
expect_sim 2 --ranks 1024 "${base[@]}" --sync --threads 65

# JSON: the documented keys, ascending ranks, identical results for one seed.
run_json() {
	"$NT" simulate --ranks 2^10-2^12 "${base[@]}" --unsync --seed "$1" --iterations 3 \
		--compute-us 100 --json "$2" >/dev/null 2>"$tmp/err"
}
run_json 5 "$tmp/a.json" && run_json 5 "$tmp/b.json" && run_json 6 "$tmp/c.json" && ok ||
	{ fail "json runs"; cat "$tmp/err"; }
for key in schema collective algorithm bytes sync seed results ranks time_ns_noise_free \
	time_ns_noisy magnification events events_per_s; do
	grep -q "\"$key\":" "$tmp/a.json" && ok || fail "json key $key"
done
[ "$(grep -o '"ranks": [0-9]*' "$tmp/a.json" | awk '{ print $2 }' | tr '\n' ' ')" = "1024 2048 4096 " ] &&
	ok || fail "json ranks ascending"
strip() { grep -v -e '"events_per_s"' -e '"seconds"' "$1"; }
cmp -s <(strip "$tmp/a.json") <(strip "$tmp/b.json") && ok || fail "same seed, same results"
cmp -s <(strip "$tmp/a.json") <(strip "$tmp/c.json") && fail "another seed, same results" || ok
"$NT" simulate --ranks 8 "${base[@]}" --sync --json - >"$tmp/out" 2>/dev/null
head -c 1 "$tmp/out" | grep -q '{' && ok || fail "--json - writes only JSON to stdout"
"$NT" simulate --ranks 8 "${base[@]}" --sync --json "$tmp/missing/x.json" >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "cannot write" "$tmp/err" && ok || fail "unwritable JSON: exit 1"
ls "$tmp" | grep -q '\.tmp\.' && fail "temporary file left" || ok

# Signature files: a TSV trace and a detour JSON, several files as a per-node set.
printf '100000\t20000\n2600000\t15000\n5000000\t30000\n' >"$tmp/t.tsv"
cat >"$tmp/s.json" <<'EOF'
{ "schema": "noisetool-noise/1", "cpus": [ { "cpu": 0, "elapsed_ns": 5000000000,
  "periodic": [ { "freq_hz": 250, "typical_ns": 16705, "phase_ns": 3630184.661 } ],
  "rare_long": { "threshold_ns": 142310, "count": 1,
                 "longest": [ { "start_ns": 4771547142, "duration_ns": 220848 } ] } } ] }
EOF
"$NT" simulate --ranks 1024 --collective barrier --signature "$tmp/t.tsv,$tmp/s.json" --unsync \
	--iterations 20 --compute-us 100 >"$tmp/out" 2>"$tmp/err" && ok || { fail "signature run"; cat "$tmp/err"; }
awk '$1 == 1024 && $4 > 1.0 { found = 1 } END { exit !found }' "$tmp/out" && ok ||
	{ fail "signature noise slows the barrier"; cat "$tmp/out"; }
echo '{ "schema": "noisetool-noise/1", "cpus": [ }' >"$tmp/bad.json"
expect_sim 2 --ranks 8 --collective barrier --signature "$tmp/bad.json" --sync
grep -q "bad.json" "$tmp/err" && ok || fail "bad signature message names the file"
printf '1\t2\nx\n' >"$tmp/bad.tsv"
expect_sim 2 --ranks 8 --collective barrier --signature "$tmp/bad.tsv" --sync
grep -q "line 2" "$tmp/err" && ok || fail "bad trace message names the line"
expect_sim 1 --ranks 8 --collective barrier --signature "$tmp/nonexistent.tsv" --sync

# The 2-rank validation setup: bulk-synchronous allreduce with 200 Hz x 200 us unsync noise.
"$NT" simulate --ranks 2 --collective allreduce --noise freq=200Hz,period=200us --unsync \
	--iterations 1000 --compute-us 1000 --json - >"$tmp/v.json" 2>"$tmp/err" && ok ||
	fail "2-rank validation setup"
grep -q '"magnification": 1.0[3-9]' "$tmp/v.json" && ok || { fail "2-rank magnification ~ 1.04-1.09"; cat "$tmp/v.json"; }

summary
