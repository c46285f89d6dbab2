#!/usr/bin/env bash
# The simulator against reality at 2 ranks: the 8-byte allreduce magnification that
# examples/coll-noise measures under the injector's noise (back-to-back calls, a detour of D
# every I, synchronized and not), against what `noisetool simulate` predicts for the same loop
# and noise. The unsynchronized result depends on the two ranks' phases, so both sides average
# over seeds (the injector's and the simulator's draws differ; the mean over random phases is
# what both estimate). The simulated call costs what the measured quiet call costs: o is set
# from it (2o + L = quiet time).
set -u
NOISETOOL=${1:?usage: bench-sim-validate.sh NOISETOOL COLL_NOISE [SEEDS] [SECONDS]}
COLL=${2:?}
SEEDS=${3:-3}
SECONDS_PER=${4:-0.3}
. "$(dirname "$0")/../tests/lib.sh"
nt_need_mpiexec
nt_need_cpus 2 "one rank per CPU"
L=22
SIM_SEEDS=16
nt_tmpdir
out=$tmp/out
for s in $(seq 1 "$SEEDS"); do
	timeout 600 mpiexec -n 2 $(nt_bind 2) "$COLL" --seconds "$SECONDS_PER" --detours 50,200 \
		--intervals 1,5 --seed $((s * 7919)) | awk -v s=$s '$1 == "allreduce" { print s, $0 }' >>"$out"
done
# seed collective D us I ms quiet sync unsync syncx unsyncx
printf "allreduce, 2 ranks, 8 bytes, back to back; measured: mean over %s injector seeds; predicted: mean over %s simulator seeds\n" "$SEEDS" "$SIM_SEEDS"
printf "%7s %9s %5s %10s %10s %8s\n" detour interval mode measured predicted ratio
worst=0
for cell in "50 1.00" "50 5.00" "200 1.00" "200 5.00"; do
	set -- $cell
	d=$1 i=$2
	read -r quiet msync munsync < <(awk -v d=$d -v i=$i '$3 == d && $5 == i { q += $7; s += $10; u += $11; n++ }
		END { printf "%.4f %.4f %.4f\n", q / n, s / n, u / n }' "$out")
	o=$(awk -v q=$quiet -v L=$L 'BEGIN { o = (q * 1000 - L) / 2; printf "%.0f", o < 0 ? 0 : o }')
	iters=$(awk -v q=$quiet -v s=$SECONDS_PER 'BEGIN { printf "%d", s * 1e6 / q }')
	freq=$(awk -v i=$i 'BEGIN { printf "%g", 1000 / i }')
	for mode in sync unsync; do
		n=1
		[ $mode = unsync ] && n=$SIM_SEEDS
		pred=$(for seed in $(seq 1 $n); do
			"$NOISETOOL" simulate --ranks 2 --collective allreduce --bytes 8 \
				--noise freq=${freq}Hz,length=${d}us --$mode --seed $seed \
				--iterations "$iters" --loggp $L,$o,71,0.123 --json - 2>/dev/null |
				tr ',' '\n' | awk -F: '/"magnification"/ { print $2 }'
		done | awk '{ t += $1; n++ } END { printf "%.3f", t / n }')
		meas=$msync
		[ $mode = unsync ] && meas=$munsync
		ratio=$(awk -v p=$pred -v m=$meas 'BEGIN { printf "%.3f", p / m }')
		printf "%4s us %6s ms %5s %10.3f %10.3f %8s\n" $d $i $mode $meas $pred $ratio
		worst=$(awk -v w=$worst -v r=$ratio 'BEGIN { d = r > 1 ? r - 1 : 1 - r; print (d > w ? d : w) }')
	done
done
awk -v w=$worst 'BEGIN { printf "largest deviation of predicted from measured magnification: %.1f %% (goal <= 25 %%)\n", w * 100 }'
