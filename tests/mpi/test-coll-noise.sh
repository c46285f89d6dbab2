#!/usr/bin/env bash
# examples/coll-noise: the magnification table has every row with sane values, and the noise was
# injected as asked, by the injector's own account (at most one detour per period, the missing
# ones explained by time off the CPU, each as long as asked). Which noise slows a collective
# more is a measurement of the machine: bench/bench-coll-noise.sh.
set -u
PROG=${1:?usage: test-coll-noise.sh COLL_NOISE}
. "$(dirname "$0")/../lib.sh"
nt_need_mpiexec
nt_tmpdir
out=$tmp/out
timeout 240 mpiexec -n 2 $(nt_bind 2) "$PROG" --seconds 0.5 --detours 20,100 >"$out" 2>&1 ||
	{ echo "FAIL: coll-noise"; cat "$out"; exit 1; }
cat "$out"
fail=0
ranks=2 rounds=5

# Magnification rows: collective D us I ms quiet sync unsync sync-x unsync-x. Times positive;
# each x the ratio of the printed times, within their rounding to 0.01.
for coll in barrier allreduce alltoall; do
	for d in 20 100; do
		rows=$(awk -v c=$coll -v d=$d '$1 == c && $2 == d && $3 == "us" && $5 == "ms" && NF == 10' "$out")
		[ "$(grep -c . <<<"$rows")" = 1 ] ||
			{ echo "FAIL: want one magnification row for $coll, $d us"; fail=1; continue; }
		awk -v i=$((d * 50)) 'function ok(x, t, q) { # x printed, t and q printed times
			lo = (t - 0.005) / (q + 0.005) - 0.005; hi = (t + 0.005) / (q - 0.005) + 0.005
			return x >= lo && (q <= 0.005 || x <= hi) }
			{ exit !($4 * 1000 == i && $6 > 0 && $7 > 0 && $8 > 0 && ok($9, $7, $6) && ok($10, $8, $6)) }' \
			<<<"$rows" || { echo "FAIL: $coll, $d us: values not sane: $rows"; fail=1; }
	done
done

# Injector rows: mode collective D us I ms runs periods detours length-ms asked-ms off-CPU-ms,
# summed over ranks and rounds. The timer fires once a period: at most periods + 1 detours a
# run. An expiration is lost only while the previous one is pending, that is while the rank is
# off its CPU for a period less the detour; host stalls, which the guest counts as CPU time,
# can hide some too (stalls and interrupts took 2 % of a thread's CPU time here under a hog on
# every CPU), so at least 80 % of the rest must be there, less 3 a run (the first expiration
# comes up to 2 periods after the start, one may be pending at the stop). Every detour lasts
# its length (what it spun plus the time off the CPU inside it). (An injector firing every 4
# periods passed a bound of 50 % under that load.)
for coll in barrier allreduce alltoall; do
	for d in 20 100; do
		for mode in sync unsync; do
			row=$(awk -v c=$coll -v d=$d -v m=$mode '$1 == m && $2 == c && $3 == d && NF == 12' "$out")
			[ "$(grep -c . <<<"$row")" = 1 ] ||
				{ echo "FAIL: want one injector row for $coll, $d us, $mode"; fail=1; continue; }
			read -r _ _ _ _ period_ms _ runs periods detours lasted asked off <<<"$row"
			why=$(awk -v d=$d -v p="$period_ms" -v runs="$runs" -v periods="$periods" \
				-v n="$detours" -v lasted="$lasted" -v asked="$asked" -v off="$off" -v want=$((ranks * rounds)) 'BEGIN {
				lost_ok = off * 1000 / (p * 1000 - d)
				if (runs != want) print "runs " runs ", want " want
				if (asked != sprintf("%.3f", n * d / 1000)) print "asked " asked " is not detours x " d " us"
				if (n > periods + runs) print n " detours in " periods " periods: more than one a period"
				if (n < 0.8 * (periods - lost_ok) - 3 * runs)
					print n " detours in " periods " periods, of which at most " lost_ok " lost off the CPU"
				if (lasted < asked * 0.9999 - 0.001) print "detours lasted " lasted " ms, less than " asked " ms asked"
			}')
			[ -z "$why" ] || { echo "FAIL: injector, $coll, $d us, $mode: $why"; fail=1; }
		done
	done
done
exit $fail
