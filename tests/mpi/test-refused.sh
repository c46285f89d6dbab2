#!/usr/bin/env bash
# Calls that MPI refuses change nothing of the tool's. In every wait mode (NOISETOOL_WAIT) each
# program's output and exit code equal its run without the library, and its report is complete
# (nothing lost, not partial) with every call counted at its function: a handle that MPI kept
# alive is still known to the tool. Three programs:
#   refused.c    the frees of MPI_COMM_WORLD, MPI_COMM_SELF and handles MPI keeps, a free stopped
#                by an attribute's delete callback, refused constructors, refused blocking,
#                nonblocking and persistent calls over live requests
#   refused.f90  the frees from Fortran (Open MPI: the library's Fortran entry points)
#   refused.py   mpi4py's test_exceptions in small (Open MPI: Debian's mpi4py is built on it)
#
#   test-refused.sh LIB PROGRAM NOISETOOL F90_SOURCE PY_SCRIPT
set -u
usage="usage: test-refused.sh LIB PROGRAM NOISETOOL F90_SOURCE PY_SCRIPT"
LIB=${1:?$usage}
PROG=${2:?$usage}
NT=${3:?$usage}
F90=${4:?$usage}
PYSCRIPT=${5:?$usage}
. "$(dirname "$0")/../lib.sh"
nt_need_mpiexec
nt_tmpdir
N=50
fail=0

# launch RUN ARGS...: a 2-rank job into $tmp/RUN.out, .err and .rc.
launch() { nt_launch 60 "$1" -n 2 $(nt_bind 2) "${@:2}"; }

# check NAME WANT CMD...: CMD without the library, then preloaded in every wait mode; WANT is
# a JSON object of the calls each rank makes, by function (refused calls included: each is MPI
# time at its site, and no instance).
check() {
	local name=$1 want=$2 wait rc
	shift 2
	launch "$name.plain" "$@"
	if [ "$(cat "$tmp/$name.plain.rc")" -ne 0 ] || ! [ -s "$tmp/$name.plain.out" ]; then
		echo "FAIL: $name without the library"
		cat "$tmp/$name.plain.out" "$tmp/$name.plain.err"
		fail=1
		return
	fi
	cat "$tmp/$name.plain.out"
	for wait in mpi busy adaptive sleep; do
		local run=$name.$wait
		mkdir "$tmp/$run"
		launch "$run" -genv LD_PRELOAD "$(nt_preload "$LIB")" -genv NOISETOOL_OUT "$tmp/$run" \
			-genv NOISETOOL_WAIT "$wait" "$@"
		rc=$(cat "$tmp/$run.rc")
		if [ "$rc" -ne 0 ]; then
			echo "FAIL: $name, NOISETOOL_WAIT=$wait: exit $rc, without the library 0"
			tail -n 20 "$tmp/$run.out" "$tmp/$run.err"
			fail=1
			continue
		fi
		cmp -s "$tmp/$name.plain.out" "$tmp/$run.out" || {
			echo "FAIL: $name, NOISETOOL_WAIT=$wait: output differs"
			diff "$tmp/$name.plain.out" "$tmp/$run.out"
			fail=1
		}
		if ! "$NT" report "$tmp/$run"/*.ntlog --top 0 --json "$tmp/$run.json" >/dev/null; then
			echo "FAIL: $name, NOISETOOL_WAIT=$wait: no report"
			cat "$tmp/$run.err"
			fail=1
			continue
		fi
		python3 - "$tmp/$run.json" "$name, NOISETOOL_WAIT=$wait" "$want" <<-'PY' || fail=1
			import json, sys
			report, what, want = json.load(open(sys.argv[1])), sys.argv[2], json.loads(sys.argv[3])
			calls = lambda f: sum(s["calls"] for s in report["sites"] if s["function"] == f)
			bad = 0
			for f, per_rank in want.items():
			    ok = calls(f) == 2 * per_rank
			    print(("ok: " if ok else "FAIL: ") +
			          f"{what}: {calls(f)} {f} calls counted, {2 * per_rank} made")
			    bad |= not ok
			lost = {k: v for k, v in report["losses"].items() if v}
			if report["partial"] or lost:
			    print(f"FAIL: {what}: the report is partial (losses {lost or 'none'})")
			    bad = 1
			sys.exit(bad)
		PY
	done
}

# refused.c: 4 allreduces a round, an ibarrier a round and the live one, and (MPI 4) the live
# persistent bcast's starts; the refused persistent init registered nothing.
want="\"MPI_Allreduce\": $((4 * N)), \"MPI_Ibarrier\": $((N + 1)), \"MPI_Ibcast\": 1,
      \"MPI_Bcast\": 1, \"MPI_Reduce\": 1"
[ "${NT_MPI_VERSION:-4}" -ge 4 ] && want+=", \"MPI_Bcast_init\": $N, \"MPI_Allreduce_init\": 0"
check c "{$want}" "$PROG" $N

# setup.sh installs gfortran and both MPIs: a missing mpif90 is a broken set-up, not a skip.
if "$NT_MPIF90" -g "$F90" -o "$tmp/refused-f90" 2>"$tmp/f90.err"; then
	check fortran "{\"MPI_Allreduce\": 100}" "$tmp/refused-f90"
else
	echo "FAIL: $NT_MPIF90 cannot build $F90:"
	cat "$tmp/f90.err"
	fail=1
fi

if [ "$NT_MPI" = ompi ]; then
	if /usr/bin/python3 -c 'import mpi4py' 2>/dev/null; then
		check python "{\"MPI_Allreduce\": $((2 * N))}" /usr/bin/python3 "$PYSCRIPT" $N
	else
		echo "FAIL: /usr/bin/python3 cannot import mpi4py: apt-get install -y python3-mpi4py"
		fail=1
	fi
fi
[ $fail -eq 0 ] && echo "refused calls: output, exit code and a complete report in every wait mode"
exit $fail
