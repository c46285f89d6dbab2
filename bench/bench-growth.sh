#!/usr/bin/env bash
# Growth of the report and of the log write (issue 18, item 3; doc/bench-growth.md).
#
# 1. `noisetool report LOG --no-symbols --json /dev/null >/dev/null` (the text report and the
#    JSON, both thrown away) on made-up logs (MAKE_NTLOG OUT NRANKS --records N: the shapes of
#    tests/integration/make-ntlog.c) over a grid of ranks x records: the log's size, the
#    generator's time, the report's wall time and peak RSS (/usr/bin/time), median of RUNS runs.
#    Then the log-log slope of the time (and of the peak RSS) against records at each rank count
#    and against ranks at each record count, over the points that took BENCH_GROWTH_FIT_MIN_S or
#    more (below that the process's start dominates), beside the slope n log n has over the same
#    points; and the acceptance line: 4,096 ranks and 10^7 records in < 30 s and < 4 GB.
#    A log the reader refuses because it would not fit in the memory this process can take
#    (doc/ntlog-format.md, "Memory": the memory available, the cgroup's and the ulimits'
#    headroom; the reader has no fixed limit) gives a row that says so, with the message.
# 2. MPI_Finalize with the library preloaded (NOISETOOL_WAIT=adaptive, summary on, log written to
#    a scratch directory) after CALLS 8-byte allreduces (FINALIZE_LOOP, bench/finalize-loop.c),
#    at 2 ranks (one per CPU) and 16 ranks (oversubscribed on 2 CPUs): the records the log holds,
#    its size, and the slowest rank's MPI_Finalize, against MPI's own MPI_Finalize (the same
#    program without the preload, after 0 calls: MPI's own end does not depend on the calls
#    before it, doc/bench-growth.md). Runs alternate, the order rotating every pair, with
#    environments of the same size; the tool's end is the median of the pairs' differences.
#
#   bench-growth.sh NOISETOOL MAKE_NTLOG [WRAPPER_LIB FINALIZE_LOOP]
#
# Environment (defaults in brackets; a quick run: BENCH_GROWTH_QUICK=1):
#   BENCH_GROWTH_PARTS     report and/or finalize ["report finalize"; finalize needs the last two
#                          arguments]
#   BENCH_GROWTH_RANKS     rank counts ["2 64 512 4096"]
#   BENCH_GROWTH_RECORDS   record counts ["1000 10000 100000 1000000 10000000"]; a count below
#                          the rank count is skipped
#   BENCH_GROWTH_RUNS      runs per point, the median is kept [3]
#   BENCH_GROWTH_FIT_MIN_S the shortest report time taken into the fits [0.05]
#   BENCH_GROWTH_FIN_RUNS  alternated pairs of jobs per MPI_Finalize point, the medians kept [5]
#   BENCH_GROWTH_FINALIZE  "NP:CALLS,CALLS... NP:..." ["2:1000,10000,100000,1000000 16:100,1000,10000"]
#                          (16 ranks on 2 CPUs: ~4-8 ms a call here, so 10^4 calls take ~1 min)
set -u
NT=${1:?usage: bench-growth.sh NOISETOOL MAKE_NTLOG [WRAPPER_LIB FINALIZE_LOOP]}
MAKE=${2:?}
LIB=${3:-}
LOOP=${4:-}
. "$(dirname "$0")/../tests/lib.sh"

if [ "${BENCH_GROWTH_QUICK:-0}" = 1 ]; then
	: "${BENCH_GROWTH_RANKS:=2 64}" "${BENCH_GROWTH_RECORDS:=1000 10000 100000}"
	: "${BENCH_GROWTH_RUNS:=1}" "${BENCH_GROWTH_FIN_RUNS:=1}"
	: "${BENCH_GROWTH_FINALIZE:=2:1000,10000 16:100}"
fi
PARTS=${BENCH_GROWTH_PARTS:-report finalize}
RANKS=${BENCH_GROWTH_RANKS:-2 64 512 4096}
RECORDS=${BENCH_GROWTH_RECORDS:-1000 10000 100000 1000000 10000000}
RUNS=${BENCH_GROWTH_RUNS:-3}
FIT_MIN_S=${BENCH_GROWTH_FIT_MIN_S:-0.05}
FIN_RUNS=${BENCH_GROWTH_FIN_RUNS:-5}
FINALIZE=${BENCH_GROWTH_FINALIZE:-2:1000,10000,100000,1000000 16:100,1000,10000}
NLOGN_TOL=0.10 # a measured slope this much above n log n's is still "no worse" (run-to-run noise)
ACC_RANKS=4096 ACC_RECORDS=10000000 ACC_S=30 ACC_KIB=$((4 * 1024 * 1024))

nt_tmpdir
status=0

# median: of the numbers on stdin, one a line ("-" for none).
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "-" }'; }
# fmt_n N: 10^k for a power of ten, else N as 7.5e6 (up to 6 significant digits) from 10^4.
fmt_n() {
	awk -v n="$1" 'BEGIN { k = log(n) / log(10); r = int(k + 0.5)
		if (n == 10 ^ r) printf "10^%d", r
		else if (n >= 1e4) { e = int(k); printf "%ge%d", n / 10 ^ e, e }
		else print n }'
}
# slope: the least-squares slope of ln y against ln x over the "x y" lines on stdin, and that of
# x ln x (n log n) over the same x, "SLOPE NLOGN_SLOPE", or "- -" for fewer than two points.
slope() {
	awk '{ x = log($1); y = log($2); z = log($1 * log($1)); n++
	       sx += x; sy += y; sz += z; sxx += x * x; sxy += x * y; sxz += x * z }
	     END { d = n * sxx - sx * sx
	           if (n < 2 || d == 0) print "- -"
	           else printf "%.2f %.2f\n", (n * sxy - sx * sy) / d, (n * sxz - sx * sz) / d }'
}

# ---------------------------------------------------------------------------------------------
# 1. The report.

# report_once LOG: "WALL_S PEAK_KIB" of one report, or "fail" (its stderr in $tmp/err).
report_once() {
	local t0 t1
	t0=$(date +%s%N)
	if /usr/bin/time -f '%M' -o "$tmp/time" "$NT" report "$1" --no-symbols --json /dev/null \
		>/dev/null 2>"$tmp/err"; then
		t1=$(date +%s%N)
		echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }') $(tail -1 "$tmp/time")"
	else
		echo fail
	fi
}

# point RANKS RECORDS [NOTE]: one row of the table; appends "RANKS RECORDS S KIB" to
# $tmp/points when the report ran, "RANKS RECORDS BYTES" to $tmp/sizes; a refused log's
# message goes to $tmp/refused.
point() {
	local r=$1 n=$2 note=${3:-} log="$tmp/log.ntlog" t0 t1 gen bytes i out times=() rss=()
	t0=$(date +%s%N)
	if ! "$MAKE" "$log" "$r" --records "$n" 2>"$tmp/err"; then
		printf "%6s %9s  make-ntlog failed: %s\n" "$r" "$(fmt_n "$n")" "$(head -1 "$tmp/err")"
		status=1
		rm -f "$log"
		return
	fi
	t1=$(date +%s%N)
	gen=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
	bytes=$(stat -c %s "$log")
	echo "$r $n $bytes" >>"$tmp/sizes"
	local cols
	cols=$(printf "%6s %9s %9.1f %6.1f %7s" "$r" "$(fmt_n "$n")" \
		"$(awk -v b="$bytes" 'BEGIN { print b / 1e6 }')" \
		"$(awk -v b="$bytes" -v n="$n" 'BEGIN { print b / n }')" "$gen")
	for ((i = 0; i < RUNS; i++)); do
		out=$(report_once "$log")
		if [ "$out" = fail ]; then
			if grep -qE "cannot read: (the log is .* more than .* of memory|out of memory)" "$tmp/err"; then
				printf "%s  refused: %s\n" "$cols" "$(head -1 "$tmp/err" | sed "s|$log|LOG|")"
				echo "$r $n $bytes $(head -1 "$tmp/err" | sed "s|$log|LOG|")" >>"$tmp/refused"
			else
				printf "%s  report failed: %s\n" "$cols" "$(head -1 "$tmp/err")"
				status=1
			fi
			rm -f "$log"
			return
		fi
		times+=("${out% *}")
		rss+=("${out#* }")
	done
	rm -f "$log"
	local tm tmin tmax km
	tm=$(printf "%s\n" "${times[@]}" | median)
	tmin=$(printf "%s\n" "${times[@]}" | sort -g | head -1)
	tmax=$(printf "%s\n" "${times[@]}" | sort -g | tail -1)
	km=$(printf "%s\n" "${rss[@]}" | median)
	printf "%s %10.3f %13s %9.1f%s\n" "$cols" "$tm" "$tmin-$tmax" \
		"$(awk -v k="$km" 'BEGIN { print k / 1024 }')" "${note:+  $note}"
	echo "$r $n $tm $km" >>"$tmp/points"
}

# fit_line LABEL: over "X S KIB" lines on stdin, those whose time is FIT_MIN_S or more: the
# least-squares slopes of time and peak RSS, and the slope of the time between the two largest
# X (the growth where it matters), each beside n log n's over the same X; sets fit_bad=1 when a
# time slope is over n log n's by more than NLOGN_TOL (so it runs in this shell, not at the end of
# a pipe: in a subshell the verdict was printed and lost, and a WORSE growth passed).
fit_line() {
	local label=$1 pts n t tn k lt ltn
	pts=$(awk -v m="$FIT_MIN_S" '$2 >= m' | sort -g)
	n=$(grep -c . <<<"$pts")
	if [ "$n" -lt 2 ]; then
		printf "  %-28s %d point(s) of >= %s s: too few to fit\n" "$label" "$n" "$FIT_MIN_S"
		return
	fi
	read -r t tn <<<"$(awk '{ print $1, $2 }' <<<"$pts" | slope)"
	read -r k _ <<<"$(awk '{ print $1, $3 }' <<<"$pts" | slope)"
	read -r lt ltn <<<"$(tail -2 <<<"$pts" | awk '{ print $1, $2 }' | slope)"
	local verdict="no worse than n log n"
	if [ "$(echo "$t <= $tn + $NLOGN_TOL && $lt <= $ltn + $NLOGN_TOL" | bc -l)" != 1 ]; then
		verdict="WORSE than n log n"
		fit_bad=1
	fi
	printf "  %-28s %d points: time %5s (n log n %s), last step %5s (n log n %s); peak RSS %5s: %s\n" \
		"$label" "$n" "$t" "$tn" "$lt" "$ltn" "$k" "$verdict"
}

report_part() {
	echo "noisetool report growth: $RUNS run(s) a point, median; logs from $(basename "$MAKE") --records"
	echo "(report: noisetool report LOG --no-symbols --json /dev/null >/dev/null; wall time; peak RSS by /usr/bin/time)"
	echo
	printf "%6s %9s %9s %6s %7s %10s %13s %9s\n" ranks records "log MB" "B/rec" "gen s" \
		"report s" "min-max s" "peak MiB"
	: >"$tmp/points"
	: >"$tmp/sizes"
	: >"$tmp/refused"
	local r n
	for r in $RANKS; do
		for n in $RECORDS; do
			[ "$n" -ge "$r" ] && point "$r" "$n"
		done
	done
	echo
	echo "Growth: log-log slopes of the report's time over the points of >= $FIT_MIN_S s (least squares, and"
	echo "between the two largest), each beside n log n's own slope over the same points (linear: 1.00):"
	fit_bad=0
	for r in $RANKS; do
		fit_line "time vs records, $r ranks" < <(awk -v r="$r" '$1 == r { print $2, $3, $4 }' "$tmp/points")
	done
	for n in $RECORDS; do
		fit_line "time vs ranks, $(fmt_n "$n") records" < <(awk -v n="$n" '$2 == n { print $1, $3, $4 }' "$tmp/points")
	done
	echo
	acceptance
	[ $fit_bad = 0 ] || status=1
}

# acceptance: the verdict line for ACC_RANKS ranks and ACC_RECORDS records.
acceptance() {
	local what="acceptance ($ACC_RANKS ranks, 10^7 records: < $ACC_S s, < 4 GB, growth <= n log n)"
	local acc refused s k bytes msg
	acc=$(awk -v r=$ACC_RANKS -v n=$ACC_RECORDS '$1 == r && $2 == n' "$tmp/points")
	refused=$(awk -v r=$ACC_RANKS -v n=$ACC_RECORDS '$1 == r && $2 == n' "$tmp/refused")
	if [ -n "$acc" ]; then
		read -r _ _ s k <<<"$acc"
		if [ "$(echo "$s < $ACC_S && $k < $ACC_KIB" | bc -l)" = 1 ] && [ $fit_bad = 0 ]; then
			echo "$what: met, $s s, $((k / 1024)) MiB"
		else
			echo "$what: $s s, $((k / 1024)) MiB: OVER BUDGET"
			status=1
		fi
		return
	fi
	if [ -z "$refused" ]; then
		echo "acceptance ($ACC_RANKS ranks, 10^7 records): not in this grid"
		return
	fi
	status=1
	read -r _ _ bytes msg <<<"$refused"
	echo "$what: NOT MET: the log is $(awk -v b="$bytes" 'BEGIN { printf "%.2f GiB", b / 2^30 }')" \
		"and the reader refuses it here ($msg)"
}

# ---------------------------------------------------------------------------------------------
# 2. MPI_Finalize.

# fin_run NP CALLS MODE: one job; prints "FINALIZE_NS LOOP_NS RECORDS BYTES" (the slowest rank's
# MPI_Finalize and loop; the log's records and size, "0 0" without the preload) or "fail".
fin_run() {
	local np=$1 calls=$2 mode=$3 out="$tmp/out" logs pre="" i
	logs=$(mktemp -d "$tmp/logs.XXXXXX") || { echo fail; return; }
	case $mode in
	tool) pre=$(nt_preload "$LIB") ;;
	none) calls=0 ;;
	esac
	# The same environment size in both modes (bench-overhead.sh: it moves the initial stack).
	local pad
	pad=$(printf "%*s" $((4096 - ${#pre})) "" | tr ' ' x)
	if timeout 1200 mpiexec -n "$np" $(nt_bind "$np") -genv LD_PRELOAD "$pre" \
		-genv NOISETOOL_OUT "$logs" -genv NOISETOOL_WAIT adaptive \
		-genv NOISETOOL_BENCH_PAD "$pad" "$LOOP" "$calls" >"$out" 2>"$tmp/fin-err"; then
		local rec=0 bytes=0 log
		if [ "$mode" = tool ]; then
			log=$(ls "$logs"/*.ntlog 2>/dev/null | head -1)
			if [ -z "$log" ]; then
				echo fail
				echo "    no log written; stderr:" >&2
				sed 's/^/    /' "$tmp/fin-err" >&2
				rm -rf "$logs"
				return
			fi
			bytes=$(stat -c %s "$log")
			rec=$("$NT" report "$log" --no-symbols --json - 2>/dev/null |
				grep -o '"records": *[0-9]*' | awk -F: '{ s += $2 } END { print s + 0 }')
		fi
		awk -v r="$rec" -v b="$bytes" '/finalize_ns/ { if ($4 > f) f = $4; if ($6 > l) l = $6 }
			END { print f + 0, l + 0, r, b }' "$out"
	else
		echo fail
		sed 's/^/    /' "$tmp/fin-err" >&2
	fi
	rm -rf "$logs"
}

# fin_point NP CALLS: one row of the table, from FIN_RUNS alternated pairs of jobs; appends
# "NP RECORDS END_NS" to $tmp/finpts.
fin_point() {
	local np=$1 c=$2 p k m fn ft lt rt bt failed=0
	local none=() tool=() diff=() recs=() bytes=() loops=()
	for ((p = 0; p < FIN_RUNS; p++)); do
		declare -A got=()
		for k in 0 1; do
			m=$([ $(((k + p) % 2)) = 0 ] && echo none || echo tool)
			got[$m]=$(fin_run "$np" "$c" "$m")
		done
		if [ "${got[none]}" = fail ] || [ "${got[tool]}" = fail ]; then
			failed=1
			continue
		fi
		read -r fn _ _ _ <<<"${got[none]}"
		read -r ft lt rt bt <<<"${got[tool]}"
		none+=("$fn") tool+=("$ft") diff+=("$((ft - fn))") recs+=("$rt")
		bytes+=("$bt") loops+=("$lt")
	done
	if [ ${#none[@]} = 0 ]; then
		printf "%5s %9s  every run failed\n" "$np" "$(fmt_n "$c")"
		status=1
		return
	fi
	[ $failed = 0 ] || { echo "  (a run at $np ranks, $c calls failed)"; status=1; }
	local rmed bm lm nm tm dm
	rmed=$(printf "%s\n" "${recs[@]}" | median)
	bm=$(printf "%s\n" "${bytes[@]}" | median)
	lm=$(printf "%s\n" "${loops[@]}" | median)
	nm=$(printf "%s\n" "${none[@]}" | median)
	tm=$(printf "%s\n" "${tool[@]}" | median)
	dm=$(printf "%s\n" "${diff[@]}" | median)
	printf "%5s %9s %9s %9.1f %9s %12.1f %12.1f %12.1f %9s\n" "$np" "$(fmt_n "$c")" \
		"$rmed" "$(awk -v b="$bm" 'BEGIN { print b / 1e3 }')" \
		"$(awk -v l="$lm" -v c="$c" 'BEGIN { if (c) printf "%.1f", l / c / 1e3; else print "-" }')" \
		"$(awk -v v="$nm" 'BEGIN { print v / 1e6 }')" \
		"$(awk -v v="$tm" 'BEGIN { print v / 1e6 }')" \
		"$(awk -v v="$dm" 'BEGIN { print v / 1e6 }')" \
		"$(awk -v v="$dm" -v r="$rmed" 'BEGIN { if (r > 0) printf "%.2f", v / r / 1e3; else print "-" }')"
	echo "$np $rmed $dm" >>"$tmp/finpts"
}

finalize_part() {
	if [ -z "$LIB" ] || [ -z "$LOOP" ]; then
		echo "MPI_Finalize growth: skipped (no wrapper library and finalize-loop given)"
		return
	fi
	nt_need_mpiexec
	if [ "$(nt_ncpus)" -lt 2 ]; then
		echo "MPI_Finalize growth: skipped: needs 2 CPUs in the affinity mask"
		return
	fi
	echo "MPI_Finalize growth ($NT_MPI): $(basename "$LOOP") CALLS (8-byte allreduces), a barrier," \
		"MPI_Finalize timed on every rank (the slowest kept);"
	echo "NOISETOOL_WAIT=adaptive, summary on; 'MPI alone' = no preload after 0 calls; $FIN_RUNS" \
		"alternated pairs a point, medians; ranks round-robin on CPUs $(nt_cpus | paste -sd,)"
	echo
	printf "%5s %9s %9s %9s %9s %12s %12s %12s %9s\n" ranks calls records "log KB" "us/call" \
		"MPI alone ms" "with tool ms" "tool's end ms" "us/record"
	local spec np cs c
	: >"$tmp/finpts"
	for spec in $FINALIZE; do
		np=${spec%%:*}
		cs=${spec#*:}
		for c in ${cs//,/ }; do
			fin_point "$np" "$c"
		done
	done
	echo
	echo "Growth of the tool's end with the records written (least squares, end = fixed + per record x records):"
	for spec in $FINALIZE; do
		np=${spec%%:*}
		awk -v np="$np" '$1 == np { n++; x = $2; y = $3 / 1e6; sx += x; sy += y; sxx += x * x; sxy += x * y }
			END { d = n * sxx - sx * sx
			      if (n < 2 || d == 0) { printf "  %d ranks: too few rows to fit\n", np; exit }
			      b = (n * sxy - sx * sy) / d; a = (sy - b * sx) / n
			      printf "  %d ranks: %.1f ms + %.2f us a record (%d rows)\n", np, a, b * 1e3, n }' "$tmp/finpts"
	done
	echo "(DESIGN.md section 5: the tool's own start and end <= 10 ms per job at 2 ranks; here the end alone)"
}

for part in $PARTS; do
	case $part in
	report) report_part ;;
	finalize) finalize_part ;;
	*)
		echo "BENCH_GROWTH_PARTS: unknown part '$part' (report, finalize)"
		exit 2
		;;
	esac
	echo
done
exit $status
