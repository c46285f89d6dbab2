#!/usr/bin/env bash
# Adaptive MPI waits (NOISETOOL_WAIT=adaptive) with 4 ranks sharing 2 CPUs (all 4 on one CPU
# when the mask has one): the ranks' own wait telemetry shows the job handed the CPU over,
# results and point-to-point traffic are those of the job without the library, and a bad value
# is refused with one message. The speed-up over the MPI's own waits is bench/bench-waits.sh's.
set -u
LIB=${1:?usage: test-waits.sh LIB ALLREDUCE_LOOP PHASES NONBLOCKING SOR}
LOOP=${2:?}
PHASES=${3:?}
NB=${4:?}
SOR=${5:?}
. "$(dirname "$0")/../lib.sh"
nt_need_mpiexec
nt_tmpdir
fail=0

# Ranks r and r + 2 share the r-th of the mask's first two CPUs, whatever its size: the
# oversubscription this test is about is made here, never assumed from the machine.
mapfile -t cpus < <(nt_cpus | head -n 2)
bind="-bind-to user:${cpus[0]},${cpus[1]:-${cpus[0]}},${cpus[0]},${cpus[1]:-${cpus[0]}}"
echo "4 ranks on CPUs ${cpus[*]} ($bind)"
run() { # WAIT PROGRAM ARGS... (WAIT none: without the library)
	local wait=$1 env=()
	shift
	[ "$wait" = none ] || env=(-genv LD_PRELOAD "$(nt_preload "$LIB")" -genv NOISETOOL_WAIT "$wait"
		-genv NOISETOOL_OUT "$tmp")
	timeout 120 mpiexec -n 4 $bind "${env[@]}" -genv NOISETOOL_SUMMARY "${SUMMARY:-0}" "$@"
}

# 1. Every rank shares its CPU with another rank, so the adaptive policy must find the CPU
#    shared and give it away in the job's waits (naps or yields): its telemetry lines
#    (NOISETOOL_SUMMARY=1) count them. Per job, not per rank: a rank that is always the last to
#    arrive (beside a CPU hog, say) never waits, and measures spinning as the better choice for
#    its own calls, as it should.
SUMMARY=1 run adaptive "$LOOP" --calls 2000 --outliers 0 >"$tmp/adaptive" 2>&1 ||
	{ echo "FAIL: adaptive run"; cat "$tmp/adaptive"; exit 1; }
grep "waits adaptive" "$tmp/adaptive"
handed=0
for r in 0 1 2 3; do
	# noisetool: rank R waits adaptive: mode M, S switches, ...; N naps, Y yields (L long)
	counts=$(awk -v r="$r" '$2 == "rank" && $3 == r && $5 == "adaptive:" {
		for (i = 1; i <= NF; i++) {
			if ($i ~ /^naps/) n = $(i - 1)
			if ($i == "yields") y = $(i - 1)
		}
		print n + 0, y + 0 }' "$tmp/adaptive")
	read -r naps yields <<<"$counts"
	if [ -z "$counts" ]; then
		echo "FAIL: rank $r printed no wait telemetry"
		fail=1
	else
		handed=$((handed + naps + yields))
	fi
done
[ "$handed" -ge 1 ] ||
	{ echo "FAIL: 4 ranks shared 2 CPUs but no wait handed the CPU over (no nap, no yield)"; fail=1; }
# The ranks compared their CPUs at MPI_Init: each knows the job's ranks crowd its CPU, holds to
# sleeping and never tries spinning (mpiwait.h, nt_mpiwait_crowded).
crowded=$(grep -c "waits adaptive: mode sleep, [0-9]* switches, CPU shared with this job's ranks .*, 0 trials" \
	"$tmp/adaptive")
[ "$crowded" -eq 4 ] ||
	{ echo "FAIL: $crowded of 4 ranks said the job's ranks crowd their CPU and tried nothing else"; fail=1; }
# Two ranks on two CPUs do not: their waits stay adaptive.
if [ -n "${cpus[1]:-}" ]; then
	SUMMARY=1 timeout 120 mpiexec -n 2 -bind-to "user:${cpus[0]},${cpus[1]}" \
		-genv LD_PRELOAD "$(nt_preload "$LIB")" -genv NOISETOOL_WAIT adaptive \
		-genv NOISETOOL_OUT "$tmp" -genv NOISETOOL_SUMMARY 1 "$LOOP" --calls 2000 --outliers 0 \
		>"$tmp/two" 2>&1 || { echo "FAIL: adaptive run, 2 ranks"; cat "$tmp/two"; exit 1; }
	[ "$(grep -c "waits adaptive" "$tmp/two")" -eq 2 ] && ! grep -q "shared with this job's ranks" "$tmp/two" ||
		{ echo "FAIL: 2 ranks on 2 CPUs said the job's ranks crowd them:"; grep "waits" "$tmp/two"; fail=1; }
fi

# 2. Same results as without the library: collectives (phases), nonblocking collectives
#    completed by waits, and SOR's halo exchanges (MPI_Sendrecv) with a loaded rank. Lines
#    saying where a rank ran and SOR's elapsed time are not results.
for prog in "$PHASES 300 20" "$NB 100" "$SOR --n 256 --iters 100 --load 100"; do
	read -r -a cmd <<<"$prog"
	name=$(basename "${cmd[0]}")
	for w in none adaptive; do
		run $w "${cmd[@]}" >"$tmp/$w" 2>"$tmp/$w.err" ||
			{ echo "FAIL: $name ($w)"; cat "$tmp/$w.err"; fail=1; }
	done
	grep -v '^rank' "$tmp/none" | sed 's/elapsed [0-9.]* s, //' >"$tmp/a"
	grep -v '^rank' "$tmp/adaptive" | sed 's/elapsed [0-9.]* s, //' >"$tmp/b"
	grep -Eq '^(result|sor:)' "$tmp/a" || { echo "FAIL: $name printed no result"; cat "$tmp/a"; fail=1; }
	cmp -s "$tmp/a" "$tmp/b" ||
		{ echo "FAIL: $name results differ with adaptive waits"; diff "$tmp/a" "$tmp/b"; fail=1; }
done

# 3. A bad value: one message naming the variable, MPICH's waits stay, the job runs.
timeout 60 mpiexec -n 2 $(nt_bind 2) -genv LD_PRELOAD "$(nt_preload "$LIB")" \
	-genv NOISETOOL_WAIT sometimes -genv NOISETOOL_SUMMARY 0 -genv NOISETOOL_OUT "$tmp" \
	"$LOOP" --calls 10 --outliers 0 >"$tmp/bad" 2>&1 ||
	{ echo "FAIL: the job did not run with a bad NOISETOOL_WAIT"; fail=1; }
[ "$(grep -c "NOISETOOL_WAIT='sometimes'" "$tmp/bad")" = 1 ] ||
	{ echo "FAIL: want one message about NOISETOOL_WAIT"; cat "$tmp/bad"; fail=1; }
exit $fail
