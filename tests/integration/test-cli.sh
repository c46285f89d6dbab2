#!/usr/bin/env bash
# The command-line contract of noisetool detour / ftq: help, bad arguments (exit 2, one line on
# stderr, a CPU outside the affinity mask named), unwritable outputs (clear error, no partial
# file), JSON and trace outputs. CPUs come from this process's affinity mask.
set -u
NT=${1:?usage: test-cli.sh path/to/noisetool}
. "$(dirname "$0")/../lib.sh"
nt_tmpdir
. "$(dirname "$0")/cli-check.sh"
mapfile -t cpus < <(nt_cpus)
cpu=${cpus[0]}

# expect_usage_error ARGS...: exit 2, exactly one line on stderr, nothing on stdout.
expect_usage_error() { expect_status 2 "$NT" "$@"; }

for sub in detour ftq version; do
	"$NT" $sub --help >"$tmp/out" 2>&1 && grep -q "Usage: noisetool $sub" "$tmp/out" && ok ||
		fail "$sub --help"
done
"$NT" --help | grep -q detour && ok || fail "noisetool --help"

expect_usage_error
expect_usage_error bogus
expect_usage_error detour --bogus
expect_usage_error detour --seconds
expect_usage_error detour --seconds abc
expect_usage_error detour --seconds -1
expect_usage_error detour --seconds 0
expect_usage_error detour --threshold-ns 1.5
expect_usage_error detour --threshold-ns -5
expect_usage_error detour --cpu 9999
expect_usage_error detour --cpu 0-
expect_usage_error detour --cpu x
expect_usage_error detour --no-classify=1
expect_usage_error detour stray
expect_usage_error ftq --quantum-us 0
expect_usage_error ftq --quantum-us 1 --seconds 100000
expect_usage_error ftq --fwq=yes
expect_usage_error version --bogus
grep -q "unknown option '--bogus'" <("$NT" detour --bogus 2>&1) && ok || fail "message names the option"

# A CPU outside the affinity mask: a usage error that names it. With two CPUs or more the
# command runs on the first only and asks for the second; with one, asks for a CPU beside it.
if [ ${#cpus[@]} -ge 2 ]; then
	mask=(taskset -c "$cpu") out=${cpus[1]}
else
	mask=() out=$((cpu > 0 ? cpu - 1 : cpu + 1))
fi
expect_status 2 "${mask[@]}" "$NT" detour --seconds 0.1 --cpu "$out"
grep -q "CPU $out is not available" "$tmp/err" && ok || { fail "the message does not name CPU $out"; cat "$tmp/err"; }
expect_status 2 "${mask[@]}" "$NT" ftq --seconds 0.1 --cpu "$cpu,$out"
grep -q "CPU $out is not available" "$tmp/err" && ok || { fail "ftq: the message does not name CPU $out"; cat "$tmp/err"; }

# Unwritable outputs: a clear error before measuring, exit 1, nothing left behind.
"$NT" detour --seconds 0.1 --cpu "$cpu" --json "$tmp/missing/dir/x.json" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] && grep -q "cannot write" "$tmp/err" && ok || fail "missing dir: rc $rc"
[ ! -e "$tmp/missing" ] && ok || fail "missing dir created"
mkdir "$tmp/ro" && chmod 0555 "$tmp/ro"
if [ "$(id -u)" != 0 ]; then
	"$NT" detour --seconds 0.1 --cpu "$cpu" --trace "$tmp/ro/t.tsv" >/dev/null 2>&1
	[ $? -eq 1 ] && [ -z "$(ls -A "$tmp/ro")" ] && ok || fail "read-only dir"
fi
"$NT" ftq --seconds 0.1 --cpu "$cpu" --json /proc/version >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && ok || fail "ftq to /proc/version should fail"

# Real outputs: table, JSON with the documented keys, a parseable trace.
"$NT" detour --seconds 0.3 --cpu "$cpu" --json "$tmp/d.json" --trace "$tmp/d.tsv" >"$tmp/out" 2>"$tmp/err"
[ $? -eq 0 ] && ok || { fail "detour run"; cat "$tmp/err"; }
grep -q "t_min" "$tmp/out" && ok || fail "table printed"
for key in cpus cpu t_min_ns noise_ratio detour_count preempted_count max_ns mean_ns median_ns p99_ns periodic; do
	grep -q "\"$key\":" "$tmp/d.json" && ok || fail "json key $key"
done
# The run's length first (doc/detour-json.md), then one detour a line.
head -n 1 "$tmp/d.tsv" | grep -qE '^# elapsed_ns [0-9]+$' && ok || fail "trace opens with # elapsed_ns N"
awk -F'\t' 'NR > 1 && (NF != 2 || $1 !~ /^[0-9]+$/ || $2 !~ /^[0-9]+$/) { bad = 1 } END { exit bad }' "$tmp/d.tsv" &&
	ok || fail "trace lines are start_ns<TAB>duration_ns"
ls "$tmp" | grep -q '\.tmp\.' && fail "temporary file left" || ok

# Every allowed CPU: one trace per CPU.
ncpu=${#cpus[@]}
"$NT" detour --seconds 0.2 --cpu all --trace "$tmp/all.tsv" --json - >"$tmp/all.json" 2>"$tmp/err"
[ $? -eq 0 ] && ok || fail "detour --cpu all"
# (FILE.cpuN for each CPU N; FILE itself when the mask has one CPU)
if [ "$ncpu" -eq 1 ]; then want=all.tsv; else want=$(printf 'all.tsv.cpu%s\n' "${cpus[@]}" | sort); fi
[ "$(ls "$tmp" | grep '^all.tsv' | sort)" = "$want" ] && ok || { fail "one trace per CPU"; ls "$tmp"; }
[ "$(grep -c '"cpu":' "$tmp/all.json")" -eq "$ncpu" ] && ok || fail "one JSON entry per CPU"

"$NT" ftq --seconds 0.3 --quantum-us 100 --cpu "$cpu" --json "$tmp/f.json" >/dev/null 2>&1 &&
	grep -q '"method": "ftq"' "$tmp/f.json" && ok || fail "ftq json"
"$NT" ftq --fwq --seconds 0.3 --quantum-us 50 --cpu "$cpu" --json "$tmp/w.json" >/dev/null 2>&1 &&
	grep -q '"method": "fwq"' "$tmp/w.json" && ok || fail "fwq json"

summary
