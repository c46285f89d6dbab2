#!/usr/bin/env bash
# A log that cannot be written at MPI_Finalize loses nothing (issue 38): the disk refuses it --
# a file size limit of 0 (EFBIG, every rank) and, as root, a small tmpfs filled to the last byte
# (ENOSPC) -- in both log modes (shared, per-rank). The job still exits 0, writes no log, and
# leaves its live files whole: `noisetool report NAME.live` counts exactly the calls the program
# made and every record the ranks held before MPI_Finalize (the program copied each rank's live
# file after its last call: tests/mpi/full-disk.c), and says the log could not be written, not
# that the ranks were killed. The control: the same job, its log written, holds every record.
# Before the fix MPI_Finalize had turned the records into their log form in place and the report
# counted 0 of them, and no loss.
#
#   test-full-disk.sh LIB PROGRAM NOISETOOL        PROGRAM: full-disk
set -u
LIB=${1:?usage: test-full-disk.sh LIB PROGRAM NOISETOOL}
PROG=${2:?}
NT=${3:?}
. "$(dirname "$0")/../lib.sh"
nt_need_mpiexec
nt_need_python "check the reports"
nt_tmpdir
fail=0
ran=0
CALLS=20000
pre=(-genv LD_PRELOAD "$(nt_preload "$LIB")" -genv NOISETOOL_SUMMARY 0 -genv NOISETOOL_MEM 2M)

# job CASE HOW LOG OUT WHY: the job with its log refused (HOW: fsize or fill), NOISETOOL_LOG=LOG,
# its log in OUT, the ground truth in $tmp/CASE; then its report judged against it (WHY: the
# error it must give).
job() {
	local case=$1 how=$2 log=$3 out=$4 why=$5 live rc
	local d=$tmp/$case
	mkdir -p "$d/snap.live" "$out"
	ran=1
	timeout 120 mpiexec -n 2 $(nt_bind 2) "${pre[@]}" -genv NOISETOOL_OUT "$out" \
		-genv NOISETOOL_LOG "$log" "$PROG" "$d/snap.live" "$how" $CALLS \
		>"$d/stdout" 2>"$d/stderr"
	rc=$?
	if [ $rc != 0 ]; then
		echo "FAIL: $case: the job exited $rc"
		cat "$d/stderr"
		fail=1
		return
	fi
	if ls "$out" | grep -q 'ntlog'; then
		echo "FAIL: $case: a log (or part of one) was left: $(ls "$out")"
		fail=1
	fi
	grep -q "no log written" "$d/stderr" ||
		{ echo "FAIL: $case: the job's stderr does not say no log was written"; cat "$d/stderr"; fail=1; }
	live=$(ls -d "$out"/*.live 2>/dev/null | head -n 1)
	if [ -z "$live" ]; then
		echo "FAIL: $case: no live files left: $(ls "$out")"
		fail=1
		return
	fi
	if ! timeout 60 "$NT" report "$live" --json "$d/report.json" >"$d/report.txt" 2>&1 ||
		! timeout 60 "$NT" report "$d/snap.live" --json "$d/snap.json" >"$d/snap.txt" 2>&1; then
		echo "FAIL: $case: noisetool report"
		cat "$d/report.txt" "$d/snap.txt"
		fail=1
		return
	fi
	grep -m1 "ranks, level" "$d/report.txt"
	"$PY" - "$d" "$case" <<'PY' || fail=1
import json, sys
d, case = sys.argv[1:3]
r = json.load(open(d + "/report.json"))
snap = json.load(open(d + "/snap.json"))
bad = 0
did = {}
for k in (0, 1):
    for line in open(f"{d}/snap.live/calls-{k}"):
        fn, n = line.split()
        did[fn] = did.get(fn, 0) + int(n)
counted = {fn: sum(s["calls"] for s in r["sites"] if s["function"] == fn) for fn in did}
kept = [k["records"] for k in r["rank_times"]]
held = [k["records"] for k in snap["rank_times"]]
print(f"{case}: calls made {did}, reported {counted}; records reported {kept} of {held} "
      f"held before MPI_Finalize; losses {r['losses']}")
if counted != did:
    print(f"FAIL: {case}: the report's calls differ from the program's"); bad = 1
if kept != held or not all(held):
    print(f"FAIL: {case}: records lost at MPI_Finalize"); bad = 1
if r["losses"] != snap["losses"]:
    print(f"FAIL: {case}: losses {r['losses']} where the ranks held {snap['losses']}"); bad = 1
if not r["partial"] or r.get("unwritten_ranks") != [0, 1]:
    print(f"FAIL: {case}: the report does not name ranks 0, 1 as those whose log could not be "
          f"written: {r.get('unwritten_ranks')}"); bad = 1
if r["unfinished_ranks"] or r["running_ranks"] or r["missing_ranks"]:
    print(f"FAIL: {case}: ranks said unfinished {r['unfinished_ranks']}, running "
          f"{r['running_ranks']} or missing {r['missing_ranks']}"); bad = 1
sys.exit(bad)
PY
	grep -q "PARTIAL: ranks 0, 1 reached MPI_Finalize but could not write the log" "$d/report.txt" ||
		{ echo "FAIL: $case: the text does not say the log could not be written"; cat "$d/report.txt"; fail=1; }
	grep -q "$why" "$d/report.txt" ||
		{ echo "FAIL: $case: the report does not give the error ($why)"; fail=1; }
	if grep -q "ended without MPI_Finalize" "$d/report.txt"; then
		echo "FAIL: $case: the text says the ranks ended without MPI_Finalize"
		fail=1
	fi
}

# The control: the same job writes its log, with every record the ranks held.
d=$tmp/clean
mkdir -p "$d/snap.live" "$d/out"
if ! timeout 120 mpiexec -n 2 $(nt_bind 2) "${pre[@]}" -genv NOISETOOL_OUT "$d/out" "$PROG" \
	"$d/snap.live" none $CALLS >"$d/stdout" 2>"$d/stderr" ||
	! timeout 60 "$NT" report "$d"/out/*.ntlog --json "$d/report.json" >/dev/null 2>&1 ||
	! timeout 60 "$NT" report "$d/snap.live" --json "$d/snap.json" >/dev/null 2>&1; then
	echo "FAIL: clean: the job or its reports failed"
	cat "$d/stderr"
	fail=1
else
	"$PY" - "$d" <<'PY' || fail=1
import json, sys
r, snap = (json.load(open(sys.argv[1] + f)) for f in ("/report.json", "/snap.json"))
kept = [k["records"] for k in r["rank_times"]]
held = [k["records"] for k in snap["rank_times"]]
print(f"clean: the log holds {kept} records of {held}; partial {r['partial']}")
if kept != held or not all(held) or r["partial"]:
    print("FAIL: clean: the log lost records or is partial")
    sys.exit(1)
PY
fi

# A file size limit: no root needed.
for log in shared per-rank; do
	job "fsize-$log" fsize "$log" "$tmp/fsize-$log/out" "File too large"
done

# Without live files (NOISETOOL_LIVE=0) the measurement is lost, and the job's stderr says so
# instead of pointing at live files that do not exist.
d=$tmp/nolive
mkdir -p "$d/snap.live" "$d/out"
if ! timeout 120 mpiexec -n 2 $(nt_bind 2) "${pre[@]}" -genv NOISETOOL_OUT "$d/out" \
	-genv NOISETOOL_LIVE 0 "$PROG" "$d/snap.live" fsize $CALLS >"$d/stdout" 2>"$d/stderr"; then
	echo "FAIL: nolive: the job failed"
	cat "$d/stderr"
	fail=1
elif ! grep -q "File too large; the measurement is lost (NOISETOOL_LIVE=0" "$d/stderr" ||
	[ -n "$(ls "$d/out")" ]; then
	echo "FAIL: nolive: the job's stderr does not say the measurement is lost, or it left $(ls "$d/out")"
	cat "$d/stderr"
	fail=1
fi

# A full file system: a tmpfs the live files fit in (2 x (2 MiB + 64 KiB)), filled by the job.
disk=$(mktemp -d) || exit 1
nt_on_exit "umount '$disk' 2>/dev/null; rmdir '$disk'"
if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP (part): not root: no tmpfs to fill"
elif ! mount -t tmpfs -o size=8m tmpfs "$disk" 2>"$tmp/mount.err"; then
	echo "SKIP (part): cannot mount a tmpfs: $(cat "$tmp/mount.err")"
else
	for log in shared per-rank; do
		rm -rf "${disk:?}"/*
		job "fill-$log" fill "$log" "$disk/$log" "No space left on device"
	done
fi
[ $ran = 1 ] || nt_skip "no case could run"
exit $fail
