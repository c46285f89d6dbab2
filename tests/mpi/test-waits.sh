#!/usr/bin/env bash
# Adaptive MPI waits (NOISETOOL_WAIT=adaptive): with 4 ranks on 2 cores an 8-byte allreduce is
# far faster than with MPICH's own busy waits (which lose whole scheduler slices), results and
# point-to-point traffic stay right, and bad values are refused with one message.
set -u
LIB=${1:?usage: test-waits.sh LIB ALLREDUCE_LOOP PHASES NONBLOCKING SOR}
LOOP=${2:?}
PHASES=${3:?}
NB=${4:?}
SOR=${5:?}
command -v mpiexec >/dev/null || { echo "SKIP: no mpiexec"; exit 77; }
[ "$(nproc)" -ge 2 ] || { echo "SKIP: needs 2 CPUs"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
run() { # NP WAIT PROGRAM ARGS...
	local np=$1 wait=$2
	shift 2
	timeout 300 mpiexec -n "$np" -bind-to core -genv LD_PRELOAD "$LIB" -genv NOISETOOL_WAIT "$wait" \
		-genv NOISETOOL_SUMMARY 0 -genv NOISETOOL_OUT "$tmp" "$@"
}
median() { awk '/^allreduce-loop:/ { for (i = 1; i <= NF; i++) if ($i == "median") { v = $(i + 1); sub(/,/, "", v); print v } }' "$1"; }

run 4 mpich "$LOOP" --calls 200 --outliers 0 >"$tmp/mpich" 2>&1 || { echo "FAIL: mpich run"; cat "$tmp/mpich"; exit 1; }
run 4 adaptive "$LOOP" --calls 2000 --outliers 0 >"$tmp/adaptive" 2>&1 || { echo "FAIL: adaptive run"; cat "$tmp/adaptive"; exit 1; }
m=$(median "$tmp/mpich")
a=$(median "$tmp/adaptive")
echo "4 ranks on 2 cores, 8-byte allreduce: median ${m} us with MPICH's waits, ${a} us adaptive"
awk -v m="$m" -v a="$a" 'BEGIN { exit !(a > 0 && a * 4 < m) }' ||
	{ echo "FAIL: adaptive waits are not 4x faster than MPICH's"; fail=1; }

# Same results: collectives (phases), nonblocking collectives completed by waits, and SOR's
# halo exchanges (MPI_Sendrecv) with a loaded rank.
for prog in "$PHASES 300 20" "$NB 100" "$SOR --n 256 --iters 100 --load 100"; do
	read -r -a cmd <<<"$prog"
	run 4 mpich "${cmd[@]}" 2>/dev/null | grep -v '^rank' | sed 's/elapsed [0-9.]* s, //' >"$tmp/a"
	run 4 adaptive "${cmd[@]}" 2>/dev/null | grep -v '^rank' | sed 's/elapsed [0-9.]* s, //' >"$tmp/b"
	[ -s "$tmp/a" ] && cmp -s "$tmp/a" "$tmp/b" ||
		{ echo "FAIL: $(basename "${cmd[0]}") results differ with adaptive waits"; diff "$tmp/a" "$tmp/b"; fail=1; }
done

# A bad value: one message naming the variable, MPICH's waits stay, the job runs.
timeout 60 mpiexec -n 2 -genv LD_PRELOAD "$LIB" -genv NOISETOOL_WAIT sometimes \
	-genv NOISETOOL_SUMMARY 0 -genv NOISETOOL_OUT "$tmp" "$LOOP" --calls 10 --outliers 0 >"$tmp/bad" 2>&1 ||
	{ echo "FAIL: the job did not run with a bad NOISETOOL_WAIT"; fail=1; }
[ "$(grep -c "NOISETOOL_WAIT='sometimes'" "$tmp/bad")" = 1 ] ||
	{ echo "FAIL: want one message about NOISETOOL_WAIT"; cat "$tmp/bad"; fail=1; }
exit $fail
