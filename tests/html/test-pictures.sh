#!/usr/bin/env bash
# The pages of the other commands, opened in headless chromium: detour, ftq and simulate --html
# (and coll-noise and udp-pingpong JSON drawn by noisetool plot) draw every chart with no
# console error, and show the numbers of the JSON the same run wrote (noise %, detour count,
# the magnification at the largest rank count, the examples' table cells) as the page prints
# them. And the contract: --html to a missing directory fails before the measurement, and
# without matplotlib the command fails at once saying what to install while --json alone works.
#
#   test-pictures.sh NOISETOOL CHECK_PAGE [COLL_NOISE] [UDP_PINGPONG]
set -u
NT=${1:?usage: test-pictures.sh NOISETOOL CHECK_PAGE [COLL_NOISE] [UDP_PINGPONG]}
CHECK=${2:?}
COLL=${3:-}
UDP=${4:-}
. "$(dirname "$0")/../lib.sh"
nt_tmpdir
nt_need_plot
fail=0
cpu=$(nt_cpus | head -1)

# py EXPR FILE: a value of the JSON document FILE, computed by Python (d is the document).
py() { "$NT_PYTHON" -c "import json, sys; d = json.load(open(sys.argv[1])); print($1)" "$2"; }

# page PAGE CHARTS [--expect CSS TEXT]...: check-page.py; a skip (no browser) skips the test.
page() {
	local p=$1 n=$2
	shift 2
	"$NT_PYTHON" "$CHECK" "$p" --charts "$n" --max-load-s 20 "$@"
	local rc=$?
	[ $rc = 77 ] && exit 77
	[ $rc = 0 ] || { echo "FAIL: $(basename "$p")"; fail=1; }
}

# A detour number as the page prints it: the noise percentage, and the detour count.
pct='format(100 * d["cpus"][0]["noise_ratio"], ".3f") + " %"'
count='format(d["cpus"][0]["detour_count"], ",").replace(",", "\u2009")'

for cmd in detour ftq; do
	j=$tmp/$cmd.json p=$tmp/$cmd.html
	"$NT" $cmd --seconds 0.5 --cpu "$cpu" --html "$p" --json "$j" >"$tmp/out" 2>&1 ||
		{ echo "FAIL: $cmd --html"; cat "$tmp/out"; fail=1; continue; }
	grep -q "page written to $p" "$tmp/out" || { echo "FAIL: $cmd does not say where the page is"; fail=1; }
	[ "$(py '"detours" in d["cpus"][0]' "$j")" = False ] ||
		{ echo "FAIL: $cmd --json without --json-detours lists the detours"; fail=1; }
	# Two figures per CPU (time series, sorted lengths), drawn even for a quiet CPU.
	page "$p" 2 --expect "[data-key=\"cpu$cpu.noise_pct\"]" "$(py "$pct" "$j")" \
		--expect "[data-key=\"cpu$cpu.detours\"]" "$(py "$count" "$j")" \
		--expect "[data-key=cpus]" "$cpu" --expect "#cpu$cpu-time" "" \
		--expect "#cpu$cpu-sorted" ""
done

# --json-detours: the series in the JSON itself, one entry per kept detour.
"$NT" detour --seconds 0.2 --cpu "$cpu" --json "$tmp/series.json" --json-detours >/dev/null 2>&1 ||
	{ echo "FAIL: detour --json-detours"; fail=1; }
[ "$(py 'len(d["cpus"][0]["detours"]["start_ns"]) == len(d["cpus"][0]["detours"]["duration_ns"]) == d["cpus"][0]["detour_count"]' "$tmp/series.json")" = True ] ||
	{ echo "FAIL: --json-detours: not one entry per kept detour"; fail=1; }

# simulate: both modes on one page, the magnification at the largest rank count as printed.
"$NT" simulate --ranks 1024,4096,16384 --collective allreduce --noise freq=1kHz,length=25us \
	--sync-unsync --iterations 20 --compute-us 200 --json "$tmp/sim.json" \
	--html "$tmp/sim.html" >"$tmp/out" 2>&1 || { echo "FAIL: simulate --html"; cat "$tmp/out"; fail=1; }
mag='format(max(d["runs"][RUN]["results"], key=lambda x: x["ranks"])["magnification"], ".4f")'
[ "$(py '[r["sync"] for r in d["runs"]]' "$tmp/sim.json")" = "[True, False]" ] ||
	{ echo "FAIL: simulate --sync-unsync: want a sync and an unsync run"; fail=1; }
page "$tmp/sim.html" 2 --expect '[data-key="magnification.sync"]' "$(py "${mag/RUN/0}" "$tmp/sim.json")" \
	--expect '[data-key="magnification.unsync"]' "$(py "${mag/RUN/1}" "$tmp/sim.json")" \
	--expect '#results-table' "$(py 'format(16384, ",").replace(",", "\u2009")' "$tmp/sim.json")"
# One mode: the plain noisetool-simulate/1 document, drawn again by noisetool plot.
"$NT" simulate --ranks 256,1024 --collective barrier --noise freq=100Hz,length=50us --unsync \
	--json "$tmp/sim1.json" >/dev/null 2>&1 || { echo "FAIL: simulate --json"; fail=1; }
"$NT" plot simulate "$tmp/sim1.json" --html "$tmp/sim1.html" || { echo "FAIL: plot simulate"; fail=1; }
page "$tmp/sim1.html" 2 --expect '[data-key="magnification.unsync"]' \
	"$(py 'format(d["results"][-1]["magnification"], ".4f")' "$tmp/sim1.json")"

# coll-noise: a short real run when MPI is here, else a made-up document of the schema.
cn=$tmp/coll.json
if [ -n "$COLL" ] && command -v "$NT_MPIEXEC" >/dev/null; then
	timeout 240 mpiexec -n 2 $(nt_bind 2) "$COLL" --seconds 0.1 --detours 100 --json "$cn" \
		>"$tmp/out" 2>&1 || { echo "FAIL: coll-noise --json"; cat "$tmp/out"; fail=1; }
	# The JSON is the printed table: each cell's row has its magnifications.
	while read -r c sx ux; do
		grep -Eq "^$c +100 us .* $sx +$ux\$" "$tmp/out" ||
			{ echo "FAIL: coll-noise: $c $sx $ux is not in the table"; fail=1; }
	done < <(py '"\n".join("%s %.2f %.2f" % (c["collective"], c["sync_x"], c["unsync_x"]) for c in d["cells"])' "$cn")
else
	echo "no coll-noise or $NT_MPIEXEC: a made-up coll-noise document"
	cat >"$cn" <<-EOF
	{ "schema": "noisetool-coll-noise/1", "ranks": 2, "seconds": 0.1, "ratio_pct": 2, "seed": 42,
	  "rounds": 5, "cells": [
	  { "collective": "barrier", "detour_us": 100, "interval_ms": 5, "quiet_us": 1.5,
	    "sync_us": 1.6, "unsync_us": 2.25, "sync_x": 1.0666, "unsync_x": 1.5,
	    "injected_sync": { "runs": 10, "periods": 40, "detours": 38, "length_ms": 3.9, "off_cpu_ms": 0.1 },
	    "injected_unsync": { "runs": 10, "periods": 40, "detours": 39, "length_ms": 4, "off_cpu_ms": 0 } } ] }
	EOF
fi
"$NT" plot coll-noise "$cn" --html "$tmp/coll.html" || { echo "FAIL: plot coll-noise"; fail=1; }
page "$tmp/coll.html" 2 --expect '#cells-table' "$(py 'format(d["cells"][0]["unsync_x"], ".2f")' "$cn")" \
	--expect '[data-key=ranks]' "$(py 'd["ranks"]' "$cn")"

# udp-pingpong: a small matrix (8 cells of 0.1 s) and its page.
un=$tmp/udp.json
if [ -n "$UDP" ]; then
	timeout 120 "$UDP" matrix --seconds 0.1 --warmup-s 0.05 --sizes 4 --loads none,100 \
		--policies busy,adaptive --repeat 1 --work-us 50 --json "$un" >"$tmp/out" 2>&1 ||
		{ echo "FAIL: udp-pingpong matrix --json"; cat "$tmp/out"; fail=1; }
	[ "$(py 'len(d["rows"])' "$un")" = 8 ] || { echo "FAIL: udp-pingpong: want 8 JSON rows"; fail=1; }
	# Every JSON row is a printed row: load, policy, mean, p99, p99.9 as printed.
	while read -r load pol m p q; do
		grep -Eq "^$load +$pol +$m +$p +$q " "$tmp/out" ||
			{ echo "FAIL: udp-pingpong: $load $pol $m $p $q is not in the table"; fail=1; }
	done < <(py '"\n".join("%s %s %.1f %.1f %.1f" % (str(r["load_pct"]) + "%" if r["load_pct"] else "none", r["policy"], r["mean_us"], r["p99_us"], r["p999_us"]) for r in d["rows"])' "$un")
else
	echo "no udp-pingpong: a made-up udp-pingpong document"
	cat >"$un" <<-EOF
	{ "schema": "noisetool-udp-pingpong/1", "server_cpu": 1, "client_cpu": 0, "backend": "epoll",
	  "seconds": 0.1, "warmup_s": 0.05, "repeat": 1, "rows": [
	  { "size": 4, "work_us": 0, "load_pct": 0, "policy": "busy", "mean_us": 21.25, "p99_us": 40,
	    "p999_us": 60, "trips": 4000, "competitor_share": 0 },
	  { "size": 4, "work_us": 0, "load_pct": 100, "policy": "busy", "mean_us": 3100, "p99_us": 8000,
	    "p999_us": 9000, "trips": 30, "competitor_share": 0.5 } ], "adaptive": [] }
	EOF
fi
"$NT" plot udp-pingpong "$un" --html "$tmp/udp.html" || { echo "FAIL: plot udp-pingpong"; fail=1; }
page "$tmp/udp.html" 2 --expect '#rtt-table' "$(py 'format(d["rows"][0]["mean_us"], ".1f")' "$un")"

# --html to a missing directory: refused before the measurement (a 30 s one), leaving no JSON.
# elapsed_s CMD...: runs CMD, prints its exit status and the seconds it took.
elapsed_s() {
	local t0 rc
	t0=$(date +%s%N)
	"$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	echo "$rc $(((($(date +%s%N) - t0) / 1000000000)))"
}
for cmd in detour ftq; do
	read -r rc s < <(elapsed_s "$NT" $cmd --seconds 30 --cpu "$cpu" --json "$tmp/m.json" \
		--html "$tmp/no/such/dir/p.html")
	[ "$rc" = 1 ] && [ "$s" -lt 20 ] && grep -q -- "--html" "$tmp/err" ||
		{ echo "FAIL: $cmd --html to a missing directory: exit $rc after $s s:"; cat "$tmp/err"; fail=1; }
	[ ! -e "$tmp/m.json" ] || { echo "FAIL: $cmd wrote the JSON anyway"; fail=1; }
	# Without matplotlib: at once, one line naming what to install; --json alone still works.
	read -r rc s < <(NOISETOOL_PYTHON=/bin/false elapsed_s "$NT" $cmd --seconds 30 --cpu "$cpu" \
		--json "$tmp/m.json" --html "$tmp/p.html")
	[ "$rc" = 1 ] && [ "$s" -lt 20 ] && grep -q "apt install python3-matplotlib" "$tmp/err" &&
		[ "$(grep -c . "$tmp/err")" = 1 ] ||
		{ echo "FAIL: $cmd --html without matplotlib: exit $rc after $s s:"; cat "$tmp/err"; fail=1; }
	[ ! -e "$tmp/m.json" ] && [ ! -e "$tmp/p.html" ] || { echo "FAIL: $cmd left an output"; fail=1; }
	NOISETOOL_PYTHON=/bin/false "$NT" $cmd --seconds 0.1 --cpu "$cpu" --json "$tmp/m.json" >/dev/null 2>&1 &&
		[ "$(py 'd["schema"]' "$tmp/m.json")" = noisetool-noise/1 ] ||
		{ echo "FAIL: $cmd --json without matplotlib"; fail=1; }
	rm -f "$tmp/m.json"
done
# simulate: the same before anything is simulated (2^22 ranks would take seconds).
big=(--ranks 2^22 --collective allreduce --noise freq=1kHz,length=25us --unsync)
read -r rc s < <(elapsed_s "$NT" simulate "${big[@]}" --html "$tmp/no/such/dir/p.html")
[ "$rc" = 1 ] && [ "$s" -lt 20 ] && grep -q -- "--html" "$tmp/err" ||
	{ echo "FAIL: simulate --html to a missing directory: exit $rc after $s s:"; cat "$tmp/err"; fail=1; }
read -r rc s < <(NOISETOOL_PYTHON=/bin/false elapsed_s "$NT" simulate "${big[@]}" --html "$tmp/p.html")
[ "$rc" = 1 ] && grep -q "apt install python3-matplotlib" "$tmp/err" && [ ! -e "$tmp/p.html" ] ||
	{ echo "FAIL: simulate --html without matplotlib: exit $rc:"; cat "$tmp/err"; fail=1; }
exit $fail
