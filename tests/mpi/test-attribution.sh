#!/usr/bin/env bash
# Attribution (issue 4): noise injected on rank 1 is blamed on rank 1 as injected time; a CPU hog
# on rank 1's core is blamed on rank 1 as preemption; clocks skewed by +-50 ms and 100 ppm are
# corrected to within 2 us. Real mpiexec, real injector, real hog.
set -u
NT=${1:?usage: test-attribution.sh NOISETOOL PROGRAM}
PROG=${2:?}
command -v mpiexec >/dev/null || { echo "SKIP: no mpiexec"; exit 77; }
[ "$(nproc)" -ge 2 ] || { echo "SKIP: needs 2 CPUs"; exit 77; }
tmp=$(mktemp -d)
hog=
trap '[ -n "$hog" ] && kill "$hog" 2>/dev/null; rm -rf "$tmp"' EXIT
fail=0

# run NAME [noisetool run options]: the job through noisetool run, its JSON report in $tmp/NAME.json
run() {
	local name=$1
	shift
	timeout 300 "$NT" run --out "$tmp/$name" --json "$tmp/$name.json" "$@" -- \
		mpiexec -n 2 -bind-to core "$PROG" 4000 100 >"$tmp/$name.out" 2>&1 ||
		{ echo "FAIL: $name run"; cat "$tmp/$name.out"; return 1; }
	sed -n '/^Late arrivals/,$p' "$tmp/$name.out"
}

# culprits FILE: one line per culprit: rank delay_ns preemption blocked page_fault extra injected unexplained
culprits() {
	awk '/"culprits": \[/ { on = 1; next } on && /^  \]/ { on = 0 }
	     on && /"rank":/ { gsub(/[^0-9]/, "", $2); r = $2 }
	     on && /"delay_ns":/ { gsub(/[^0-9]/, "", $2); d = $2 }
	     on && /_ns":/ && !/delay_ns/ { gsub(/[^0-9]/, "", $2); c = c " " $2 }
	     on && /"unexplained_ns":/ { print r, d c; c = "" }' "$1"
}

# 1. Unsynchronized 200 us every 5 ms on rank 1. The VM's own host stalls (ms long, real, and
#    reported as preemption) land on either rank now and then and can tip one run's shares,
#    so a run that misses is repeated, at most three runs in all; a wrong attribution misses
#    every time.
for attempt in 1 2 3; do
	run inject --inject period=5ms,detour=200us,mode=unsync,ranks=1,seed=$attempt || { fail=1; break; }
	culprits "$tmp/inject.json" >"$tmp/inject.culprits"
	read -r rank delay pre blk pf ew inj un <"$tmp/inject.culprits"
	total=$(awk '{ s += $2 } END { print s + 0 }' "$tmp/inject.culprits")
	rank0=$(awk '$1 == 0 { print $2 }' "$tmp/inject.culprits")
	causes=$((pre + blk + pf + ew + inj + un))
	echo "attempt $attempt: top culprit rank $rank, injected $inj of $causes ns, rank 0 ${rank0:-0} of $total ns"
	miss=
	[ "$rank" = 1 ] || miss="top culprit is rank $rank, not 1"
	[ $((inj * 10)) -ge $((causes * 8)) ] || miss="${miss:+$miss; }injected is under 80 % of rank 1's causes"
	[ $((${rank0:-0} * 10)) -lt "$total" ] || miss="${miss:+$miss; }rank 0 carries 10 % or more of the delay"
	[ -z "$miss" ] && break
	echo "  missed: $miss"
	[ $attempt = 3 ] && { echo "FAIL: three runs missed; the last: $miss"; fail=1; }
	rm -rf "$tmp/inject"
done

# 2. A CPU hog on rank 1's core: rank 1 is the top culprit, preemption its largest cause.
cpu=$(awk '/^rank 1 cpu/ { print $4 }' "$tmp/inject.out")
if [ -n "$cpu" ]; then
	taskset -c "$cpu" sh -c 'while :; do :; done' &
	hog=$!
	run hog && {
		read -r rank delay pre blk pf ew inj un < <(culprits "$tmp/hog.json")
		echo "hog on CPU $cpu: top culprit rank $rank, preemption $pre of $delay ns"
		[ "$rank" = 1 ] || { echo "FAIL: top culprit is rank $rank, not 1"; fail=1; }
		for other in $blk $pf $ew $inj $un; do
			[ "$pre" -ge "$other" ] || { echo "FAIL: preemption is not the largest cause"; fail=1; break; }
		done
	} || fail=1
	kill "$hog"
	hog=
else
	echo "FAIL: the program did not say where rank 1 runs"; fail=1
fi

# 3. Skewed clocks: +-50 ms offset and 100 ppm drift on rank 1, corrected within 2 us.
for skew in "1:50000000:100" "1:-50000000:-100"; do
	NOISETOOL_TEST_CLOCK=$skew run clock || { fail=1; continue; }
	err=$(awk -F: '/"test_error_ns"/ { gsub(/[^0-9]/, "", $2); print $2 }' "$tmp/clock.json")
	echo "clock skew $skew: largest error of a corrected time ${err:-?} ns"
	[ -n "$err" ] && [ "$err" -le 2000 ] || { echo "FAIL: clock correction error ${err:-missing} ns > 2 us"; fail=1; }
	rm -rf "$tmp/clock"
done
exit $fail
