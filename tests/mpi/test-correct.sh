#!/usr/bin/env bash
# Correct MPI programs that a careless tool would break (issue 13). Each case runs without the
# library, with it preloaded, and preloaded with NOISETOOL_WAIT=adaptive, every run under
# timeout; exit code and standard output must equal the run without the library. One line per
# case and mode: PASS, or FAIL with the reason (a hang, the exit code, the output).
#
#   test-correct.sh LIB PATTERN CASE...    PATTERN names the correct-* programs of the MPI
#                                           under test, %s for the case (dir/correct-%s-ompi)
#
# Cases: nb-order nb-p2p persistent comms comm-churn waitall threads errors abort (one program
# each), mixed-env (the ranks of one job with different NOISETOOL_* values), arena (one rank
# cannot reserve its NOISETOOL_MEM).
set -u
usage="usage: test-correct.sh LIB PATTERN CASE..."
LIB=${1:?$usage}
PATTERN=${2:?$usage}
shift 2
[ $# -gt 0 ] || { echo "$usage"; exit 2; }
. "$(dirname "$0")/../lib.sh"
nt_need_mpiexec
nt_tmpdir
LIMIT_S=60 # a run that takes longer hangs: every case takes a few seconds at most
mkdir "$tmp/logs"
PRE=(-genv LD_PRELOAD "$(nt_preload "$LIB")" -genv NOISETOOL_OUT "$tmp/logs")
ADAPTIVE=(-genv NOISETOOL_WAIT adaptive)
passed=0 failed=0 skipped=0

# prog_of CASE: the program of a case, for the MPI under test.
prog_of() {
	# shellcheck disable=SC2059 # the pattern is ours
	printf "$PATTERN" "$1"
}

# The program that mixed-env and arena run: persistent collectives (fresh communicators,
# persistent and blocking collectives, point-to-point) where the MPI has them (MPI 4), else
# nonblocking ones completed out of order.
if [ "${NT_MPI_VERSION:-4}" -ge 4 ]; then
	MIXED=$(prog_of persistent)
else
	MIXED=$(prog_of nb-order)
fi

# launch RUN ARGS...: mpiexec ARGS under timeout (nt_launch).
launch() { nt_launch "$LIMIT_S" "$@"; }

rc_of() { cat "$tmp/$1.rc"; }

# hung RUN: timeout stopped it (124, or 137 when it had to kill).
hung() { [ "$(rc_of "$1")" -eq 124 ] || [ "$(rc_of "$1")" -eq 137 ]; }

# show RUN: the end of a run's output, for a failure's diagnosis.
show() {
	echo "--- $1: exit $(rc_of "$1"), stdout:"
	tail -n 15 "$tmp/$1.out"
	echo "--- $1: stderr:"
	tail -n 15 "$tmp/$1.err"
}

# reference CASE RUN EXPECT: judge the run without the library, which the others are compared
# with. EXPECT is "zero" or "nonzero" (the exit code the program is written to give). Returns
# non-zero when the case cannot go on (a failure or a skip, already reported).
reference() {
	local case=$1 run=$2 expect=$3 rc
	rc=$(rc_of "$run")
	if hung "$run"; then
		echo "FAIL $case plain: hangs without the library (no exit in $LIMIT_S s): the program is wrong"
	elif [ "$rc" -eq $NT_SKIP ]; then
		echo "SKIP $case: $(tail -n 1 "$tmp/$run.err")"
		skipped=$((skipped + 1))
		return 1
	elif [ "$expect" = zero ] && [ "$rc" -ne 0 ]; then
		echo "FAIL $case plain: exit $rc without the library: the program or MPI is broken"
	elif [ "$expect" = nonzero ] && [ "$rc" -eq 0 ]; then
		echo "FAIL $case plain: exit 0 without the library, where the program aborts"
	elif [ "$expect" = zero ] && ! [ -s "$tmp/$run.out" ]; then
		echo "FAIL $case plain: printed nothing"
	else
		return 0
	fi
	show "$run"
	failed=$((failed + 1))
	return 1
}

# judge CASE MODE REF RUN: RUN must have exited as REF did, with the same standard output.
judge() {
	local case=$1 mode=$2 ref=$3 run=$4 why=
	if hung "$run"; then
		why="hangs under the preload (no exit in $LIMIT_S s)"
	elif [ "$(rc_of "$run")" -ne "$(rc_of "$ref")" ]; then
		why="exit $(rc_of "$run"), without the library $(rc_of "$ref")"
	elif ! cmp -s "$tmp/$ref.out" "$tmp/$run.out"; then
		why="standard output differs from the run without the library"
	fi
	if [ -z "$why" ]; then
		echo "PASS $case $mode"
		passed=$((passed + 1))
		return 0
	fi
	echo "FAIL $case $mode: $why"
	hung "$run" || diff -u "$tmp/$ref.out" "$tmp/$run.out" | head -n 30
	show "$run"
	failed=$((failed + 1))
}

# standard CASE NP EXPECT: correct-CASE on NP ranks in the three modes.
standard() {
	local case=$1 np=$2 expect=$3 prog bind
	prog=$(prog_of "$case")
	bind=$(nt_bind "$np")
	launch "$case.plain" $bind -n "$np" "$prog"
	reference "$case" "$case.plain" "$expect" || return 0
	launch "$case.preload" $bind "${PRE[@]}" -n "$np" "$prog"
	judge "$case" preload "$case.plain" "$case.preload"
	launch "$case.adaptive" $bind "${PRE[@]}" "${ADAPTIVE[@]}" -n "$np" "$prog"
	judge "$case" adaptive "$case.plain" "$case.adaptive"
}

# mixed-env: rank 0 and rank 1 of one preloaded job with different values of one variable
# (each way round), running $MIXED; the output must equal the run without the library.
mixed_env() {
	local prog=$MIXED bind name var a b
	bind=$(nt_bind 2)
	launch mixed.plain $bind -n 2 "$prog"
	reference mixed-env mixed.plain zero || return 0
	while read -r name var a b; do
		for way in 0 1; do
			local v0=$a v1=$b env0=() env1=()
			[ $way = 0 ] || { v0=$b; v1=$a; }
			[ "$v0" = - ] || env0=(-env "$var" "$v0")
			[ "$v1" = - ] || env1=(-env "$var" "$v1")
			local mode="$var rank0=${v0/#-/unset} rank1=${v1/#-/unset}"
			launch "mixed.$name.$way" $bind "${PRE[@]}" -n 1 "${env0[@]}" "$prog" : \
				-n 1 "${env1[@]}" "$prog"
			judge mixed-env "$mode" mixed.plain "mixed.$name.$way"
		done
	done <<-'EOF'
		disable NOISETOOL_DISABLE 1 -
		summary NOISETOOL_SUMMARY 0 1
		wait NOISETOOL_WAIT adaptive mpi
		level NOISETOOL_LEVEL timing os
		mem NOISETOOL_MEM 1M 16M
		inject NOISETOOL_INJECT period=5ms,detour=200us -
	EOF
}

# arena: one rank (rank 0, then rank 1) runs under an address-space limit with
# NOISETOOL_MEM=4G, so that its arena cannot be reserved although MPICH starts.
arena() {
	local prog=$MIXED bind kib=$((1 << 20)) # 1 GiB
	if [ -n "${NT_PRELOAD_FIRST:-}" ]; then
		echo "SKIP arena: a sanitizer's runtime cannot start under an address-space limit"
		skipped=$((skipped + 1))
		return 0
	fi
	# A 4 GiB allocation must fail under the limit (dd allocates its block, reads nothing).
	if sh -c "ulimit -v $kib && dd if=/dev/null of=/dev/null bs=4G count=1" 2>/dev/null; then
		echo "SKIP arena: ulimit -v $kib does not stop a 4 GiB allocation here"
		skipped=$((skipped + 1))
		return 0
	fi
	local limited=(sh -c "ulimit -v $kib && exec \"\$0\" \"\$@\"" "$prog")
	bind=$(nt_bind 2)
	launch arena.plain $bind -n 2 "$prog"
	reference arena arena.plain zero || return 0
	for r in 0 1; do
		local seg0=(-n 1 "$prog") seg1=(-n 1 "$prog") mem=(-env NOISETOOL_MEM 4G)
		if [ $r = 0 ]; then seg0=(-n 1 "${limited[@]}"); else seg1=(-n 1 "${limited[@]}"); fi
		launch "arena.limited$r" $bind "${seg0[@]}" : "${seg1[@]}"
		if hung "arena.limited$r" || [ "$(rc_of "arena.limited$r")" -ne 0 ] ||
			! cmp -s "$tmp/arena.plain.out" "$tmp/arena.limited$r.out"; then
			echo "SKIP arena rank $r: the MPI itself needs more than $kib KiB of address space here"
			show "arena.limited$r"
			skipped=$((skipped + 1))
			continue
		fi
		if [ $r = 0 ]; then
			seg0=(-n 1 "${mem[@]}" "${limited[@]}")
		else
			seg1=(-n 1 "${mem[@]}" "${limited[@]}")
		fi
		launch "arena.preload$r" $bind "${PRE[@]}" "${seg0[@]}" : "${seg1[@]}"
		judge arena "rank$r-limited-preload" arena.plain "arena.preload$r"
		launch "arena.adaptive$r" $bind "${PRE[@]}" "${ADAPTIVE[@]}" "${seg0[@]}" : "${seg1[@]}"
		judge arena "rank$r-limited-adaptive" arena.plain "arena.adaptive$r"
	done
}

for case in "$@"; do
	case "$case" in
	nb-order | nb-p2p | persistent | comm-churn | waitall | threads | errors)
		standard "$case" 2 zero
		;;
	comms) standard comms 4 zero ;; # MPI_UNDEFINED in a split needs 3 or more ranks
	abort) standard abort 2 nonzero ;; # the launcher's exit code; the MPI's message may be lost
	mixed-env) mixed_env ;;
	arena) arena ;;
	*)
		echo "test-correct.sh: unknown case '$case'"
		exit 2
		;;
	esac
done
echo "correct: $passed passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ] || exit 1
[ $passed -gt 0 ] || exit $NT_SKIP
exit 0
