#!/usr/bin/env bash
# The README's commands, run as written (globs included) in a scratch directory, with the
# example allreduce-loop as ./your-mpi-program (MPICH) and ./your-ompi-program (Open MPI, when
# built): two runs, their report as JSON, HTML, Perfetto and CSV, and the comparison page.
# Each command must succeed and write what it names; the pages open in headless chromium.
#
#   test-readme.sh README NOISETOOL PROGRAM_MPICH [PROGRAM_OMPI]
set -u
README=${1:?usage: test-readme.sh README NOISETOOL PROGRAM_MPICH [PROGRAM_OMPI]}
NT=${2:?}
PROG=${3:?}
OPROG=${4:-}
. "$(dirname "$0")/../lib.sh"
CHECK_PAGE=$(cd "$(dirname "$0")/../html" && pwd)/check-page.py
nt_need_plot
command -v mpiexec.mpich >/dev/null || nt_skip "no mpiexec.mpich"
nt_tmpdir
fail=0
cp "$PROG" "$tmp/your-mpi-program"
[ -n "$OPROG" ] && cp "$OPROG" "$tmp/your-ompi-program"

# The commands of the README's first two shell blocks that run or report a job.
mapfile -t cmds < <(grep -E '^build/tools/noisetool (run --out|report before/)' "$README")
[ ${#cmds[@]} -ge 5 ] || { echo "FAIL: found ${#cmds[@]} README commands, expected 5 or more"; exit 1; }
for c in "${cmds[@]}"; do
	if [[ $c == *mpiexec.openmpi* ]] && { [ -z "$OPROG" ] || ! command -v mpiexec.openmpi >/dev/null; }; then
		echo "skipped (no Open MPI build): $c"
		continue
	fi
	echo "\$ $c"
	run=${c/#build\/tools\/noisetool/\"\$NT\"}
	asan=${ASAN_OPTIONS:-}
	# Open MPI's own leaks are not ours (tests/lib.sh: leaks are checked under MPICH).
	[[ $c == *mpiexec.openmpi* && -n $asan ]] && asan="$asan:detect_leaks=0"
	if ! (cd "$tmp" && NT=$NT ASAN_OPTIONS=$asan timeout 300 bash -c "$run" >"$tmp/out" 2>&1); then
		echo "FAIL: the README command failed: $c"
		tail -5 "$tmp/out"
		fail=1
	fi
done
for f in report.json report.html trace.json tables/sites.csv tables/late.csv compare.html; do
	[ -s "$tmp/$f" ] || { echo "FAIL: the README's commands did not write $f"; fail=1; }
done
for page in report.html compare.html; do
	[ -s "$tmp/$page" ] || continue
	"$NT_PYTHON" "$CHECK_PAGE" "$tmp/$page" --charts 2
	rc=$?
	[ $rc = 77 ] && nt_skip "no browser for the pages"
	[ $rc = 0 ] || fail=1
done
exit $fail
