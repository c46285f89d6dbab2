#!/usr/bin/env bash
# The command-line contract of noisetool detour / ftq: help, bad arguments (exit 2, one line on
# stderr), unwritable outputs (clear error, no partial file), JSON and trace outputs.
set -u
NT=${1:?usage: test-cli.sh path/to/noisetool}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/cli-check.sh"

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

# Unwritable outputs: a clear error before measuring, exit 1, nothing left behind.
"$NT" detour --seconds 0.1 --cpu 0 --json "$tmp/missing/dir/x.json" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] && grep -q "cannot write" "$tmp/err" && ok || fail "missing dir: rc $rc"
[ ! -e "$tmp/missing" ] && ok || fail "missing dir created"
mkdir "$tmp/ro" && chmod 0555 "$tmp/ro"
if [ "$(id -u)" != 0 ]; then
	"$NT" detour --seconds 0.1 --cpu 0 --trace "$tmp/ro/t.tsv" >/dev/null 2>&1
	[ $? -eq 1 ] && [ -z "$(ls -A "$tmp/ro")" ] && ok || fail "read-only dir"
fi
"$NT" ftq --seconds 0.1 --cpu 0 --json /proc/version >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && ok || fail "ftq to /proc/version should fail"

# Real outputs: table, JSON with the documented keys, a parseable trace.
"$NT" detour --seconds 0.3 --cpu 0 --json "$tmp/d.json" --trace "$tmp/d.tsv" >"$tmp/out" 2>"$tmp/err"
[ $? -eq 0 ] && ok || { fail "detour run"; cat "$tmp/err"; }
grep -q "t_min" "$tmp/out" && ok || fail "table printed"
for key in cpus cpu t_min_ns noise_ratio detour_count preempted_count max_ns mean_ns median_ns p99_ns periodic; do
	grep -q "\"$key\":" "$tmp/d.json" && ok || fail "json key $key"
done
awk -F'\t' 'NF != 2 || $1 !~ /^[0-9]+$/ || $2 !~ /^[0-9]+$/ { bad = 1 } END { exit bad }' "$tmp/d.tsv" &&
	ok || fail "trace lines are start_ns<TAB>duration_ns"
ls "$tmp" | grep -q '\.tmp\.' && fail "temporary file left" || ok

# Every allowed CPU: one trace per CPU.
ncpu=$(nproc)
"$NT" detour --seconds 0.2 --cpu all --trace "$tmp/all.tsv" --json - >"$tmp/all.json" 2>"$tmp/err"
[ $? -eq 0 ] && ok || fail "detour --cpu all"
[ "$(ls "$tmp" | grep -c '^all.tsv.cpu')" -eq "$ncpu" ] && ok || fail "one trace per CPU"
[ "$(grep -c '"cpu":' "$tmp/all.json")" -eq "$ncpu" ] && ok || fail "one JSON entry per CPU"

"$NT" ftq --seconds 0.3 --quantum-us 100 --cpu 0 --json "$tmp/f.json" >/dev/null 2>&1 &&
	grep -q '"method": "ftq"' "$tmp/f.json" && ok || fail "ftq json"
"$NT" ftq --fwq --seconds 0.3 --quantum-us 50 --cpu 0 --json "$tmp/w.json" >/dev/null 2>&1 &&
	grep -q '"method": "fwq"' "$tmp/w.json" && ok || fail "fwq json"

summary
