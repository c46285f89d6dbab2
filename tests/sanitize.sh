#!/usr/bin/env bash
# The sanitizer runs, from scratch or on existing build directories: the whole suite under
# ASan+UBSan (build-asan), the threaded tests (thread-multiple, correct-threads, unit recpolicy)
# under TSan (build-tsan); one summary line; a non-zero exit on a failure or on too few tests run.
#
#   tests/sanitize.sh [asan|tsan|all]        (default all; ASAN_BUILD, TSAN_BUILD: directories)
set -uo pipefail
cd "$(dirname "$0")/.."

what=${1:-all}
case "$what" in
asan | tsan | all) ;;
*)
	sed -n '6p' "$0" | sed 's/^# *//' >&2
	exit 2
	;;
esac
ASAN_BUILD=${ASAN_BUILD:-build-asan}
TSAN_BUILD=${TSAN_BUILD:-build-tsan}

# Every feature the runs need is enabled: a missing dependency stops here instead of leaving a
# smaller suite. UBSan stops at its first report, as ASan does. GCC 12 at -O2 with ASan warns
# of uninitialized members inside libstdc++'s std::function in Catch2's main (-Werror).
common=(-Dwerror=true -Dbuildtype=debugoptimized -Db_lundef=false -Dtests=enabled -Dmpi=all
	-Dwrappers=enabled -Dlibunwind=enabled -Dexamples=true)
asan_opts=("${common[@]}" -Db_sanitize=address,undefined
	-Dc_args=-fno-sanitize-recover=undefined
	"-Dcpp_args=-fno-sanitize-recover=undefined -Wno-maybe-uninitialized")
tsan_opts=("${common[@]}" -Db_sanitize=thread -Dcpp_args=-Wno-maybe-uninitialized)

# configure DIR OPTIONS...: set up DIR, or bring an existing one to these options.
configure() {
	local dir=$1
	shift
	if [ -f "$dir/build.ninja" ]; then
		meson configure "$dir" "$@" >/dev/null
	else
		meson setup "$dir" "$@" >/dev/null
	fi
}

# count FIELD LOG: a count from the summary of meson test.
count() { awk -v f="$1:" 'index($0, f) == 1 { n = $NF } END { print n + 0 }' "$2"; }

# run_setup NAME DIR EXPECTED MESON-TEST-ARGS...: run, then set ok/fail/skip (a run of fewer
# tests than EXPECTED counts the missing ones as failed).
run_setup() {
	local name=$1 dir=$2 expected=$3 log start ran
	shift 3
	log=$(mktemp)
	start=$SECONDS
	meson test -C "$dir" --setup "$name" --print-errorlogs --num-processes 2 "$@" | tee "$log"
	ok=$(count Ok "$log")
	fail=$(($(count Fail "$log") + $(count Timeout "$log") + $(count "Unexpected Pass" "$log")))
	skip=$(count Skipped "$log")
	ran=$((ok + fail + skip + $(count "Expected Fail" "$log")))
	if [ "$ran" -lt "$expected" ]; then
		echo "sanitize.sh: $name ran $ran of $expected tests" >&2
		fail=$((fail + expected - ran))
	fi
	rm -f "$log"
	# Each skip with the reason the test gave.
	awk '/^test: / { t = $0; sub(/^test: +/, "", t) }
	     /^result: / { skip = /exit status 77/; said = 0 }
	     skip && !said && /SKIP: / { sub(/.*SKIP: /, ""); print "skipped: " t ": " $0; said = 1 }' \
		"$dir/meson-logs/testlog-$name.txt"
	echo "sanitize.sh: $name took $((SECONDS - start)) s"
}

status=0
summary=()
if [ "$what" != tsan ]; then
	configure "$ASAN_BUILD" "${asan_opts[@]}" || exit 1
	meson compile -C "$ASAN_BUILD" >/dev/null || { meson compile -C "$ASAN_BUILD"; exit 1; }
	n=$(meson test -C "$ASAN_BUILD" --list 2>/dev/null | grep -Ec '^[A-Za-z0-9_.-]+:[A-Za-z0-9_.+-]+ / ')
	run_setup asan "$ASAN_BUILD" "$n" --no-rebuild
	summary+=("asan+ubsan $ok passed, $fail failed, $skip skipped")
	[ "$fail" -eq 0 ] && [ "$n" -gt 0 ] || status=1
fi
if [ "$what" != asan ]; then
	# Only what the threaded tests run, under MPICH: the TSan build of the rest adds nothing to
	# them (not tried with Open MPI).
	configure "$TSAN_BUILD" "${tsan_opts[@]}" || exit 1
	targets=(tests/mpi/threads-mpich tests/mpi/correct-threads-mpich tools/noisetool:executable
		wrappers/noisetool-mpich tests/unit/unit-test-recpolicy)
	meson compile -C "$TSAN_BUILD" "${targets[@]}" >/dev/null ||
		{ meson compile -C "$TSAN_BUILD" "${targets[@]}"; exit 1; }
	run_setup tsan "$TSAN_BUILD" 3 --no-rebuild --suite mpi-mpich --suite unit thread-multiple \
		correct-threads recpolicy
	summary+=("tsan $ok passed, $fail failed, $skip skipped")
	[ "$fail" -eq 0 ] || status=1
fi
(
	IFS=';'
	echo "sanitizers: ${summary[*]}" | sed 's/;/; /g'
)
exit $status
