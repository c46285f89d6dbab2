#!/usr/bin/env bash
# Outputs that cannot destroy anything (doc/noisetool.md, "Outputs"): a character device, a
# FIFO, - and /dev/stdout are written in place and stay what they were; a symlink of ours to a
# file beside it is written through and stays a symlink; an input, a directory or a missing
# directory is refused before any work, leaving every file as it was; noisetool run creates
# --out with its parents and checks --json before the job starts. Only nodes made in the scratch directory are written:
# the real /dev/null is never an output here.
set -u
NT=${1:?usage: test-outputs.sh NOISETOOL MAKE-NTLOG}
MAKE=${2:?}
. "$(dirname "$0")/../lib.sh"
nt_tmpdir
. "$(dirname "$0")/cli-check.sh"
mapfile -t cpus < <(nt_cpus)
cpu=${cpus[0]}
skipped=() # preconditions this machine lacks: the test ends 77 unless something failed

# Short runs of each command; every one bounded, so a blocking open is a failure, not a hang.
detour() { timeout -k 2 20 "$NT" detour --seconds 0.1 --cpu "$cpu" "$@"; }
sim() { timeout -k 2 20 "$NT" simulate --ranks 8 --collective barrier --sync "$@"; }
report() { timeout -k 2 20 "$NT" report "$log" --no-symbols "$@"; }
# no_temporaries DIR: no temporary output file is left in DIR.
no_temporaries() { ls -A "$1" | grep -q '\.tmp\.' && fail "temporary file left in $1: $(ls -A "$1")" || ok; }
# ms: a monotonic clock in milliseconds.
ms() { echo $(($(date +%s%N) / 1000000)); }

# noisetool run needs a wrapper library (a build with -Dwrappers=enabled); these commands name
# no MPI, so the cases say which library to preload (--mpi), as a user would.
have_run=1
libs=$("$NT" version | sed -n 's/^wrapper libraries: //p')
case "$libs" in
*MPICH*) run_mpi=mpich ;;
*"Open MPI"*) run_mpi=openmpi ;;
*)
	have_run=
	skipped+=("no wrapper library in this build: the noisetool run cases were not run")
	;;
esac
# run_checks CMD...: CMD when noisetool run can run here.
run_checks() { [ -z "$have_run" ] || "$@"; }

printf '100000\t20000\n2600000\t15000\n5000000\t30000\n' >"$tmp/t.tsv"
cp "$tmp/t.tsv" "$tmp/t.orig"
log=$tmp/job.ntlog
"$MAKE" "$log" 2 >/dev/null || { fail "make-ntlog"; summary; exit 1; }
cp "$log" "$tmp/job.orig"

# --- A character device: written in place, never replaced by a regular file.
if mknod "$tmp/null" c 1 3 2>"$tmp/err"; then
	detour --json "$tmp/null" >/dev/null 2>"$tmp/err" && ok || { fail "detour --json DEVICE"; cat "$tmp/err"; }
	sim --noise freq=1kHz,length=1us --json "$tmp/null" >/dev/null 2>"$tmp/err" && ok ||
		{ fail "simulate --json DEVICE"; cat "$tmp/err"; }
	report --json "$tmp/null" >/dev/null 2>"$tmp/err" && ok || { fail "report --json DEVICE"; cat "$tmp/err"; }
	[ -c "$tmp/null" ] && [ ! -L "$tmp/null" ] && ok || fail "the device node was replaced: $(ls -l "$tmp/null")"
	# Through a symlink: the device is written, the link stays.
	ln -s null "$tmp/to-null"
	detour --json "$tmp/to-null" --trace "$tmp/to-null" >/dev/null 2>"$tmp/err" && ok ||
		{ fail "detour --json/--trace LINK-TO-DEVICE"; cat "$tmp/err"; }
	[ -L "$tmp/to-null" ] && [ -c "$tmp/null" ] && ok || fail "the link to the device was replaced"
	rm -f "$tmp/null" "$tmp/to-null"
else
	skipped+=("mknod of a character device failed ($(cat "$tmp/err")): the device case was not run")
fi

# --- A FIFO with a reader: the JSON arrives through it, the FIFO stays a FIFO. The shell holds
# the FIFO open read-write (fd 4) while cat starts and noisetool writes, so that the reader is
# there whenever noisetool opens it; closing fd 4 afterwards gives cat its end of file.
mkfifo "$tmp/fifo"
exec 4<>"$tmp/fifo"
timeout -k 2 20 cat "$tmp/fifo" >"$tmp/fifo.out" 4>&- &
reader=$!
for _ in $(seq 100); do # until cat has it open (at most 5 s)
	for f in $(pgrep -P $reader | sed 's|.*|/proc/&/fd/*|'); do
		[ "$(readlink "$f")" = "$tmp/fifo" ] && break 2
	done
	sleep 0.05
done
detour --json "$tmp/fifo" >/dev/null 2>"$tmp/err" 4>&- && ok || { fail "detour --json FIFO"; cat "$tmp/err"; }
exec 4>&-
wait $reader
grep -q '"schema": "noisetool-noise/1"' "$tmp/fifo.out" && ok || { fail "the JSON did not come through the FIFO"; head -c 300 "$tmp/fifo.out"; }
[ -p "$tmp/fifo" ] && ok || fail "the FIFO was replaced: $(ls -l "$tmp/fifo")"

# A FIFO without a reader: a clear error at once, before the measurement, not a blocked open.
t0=$(ms)
timeout -k 2 20 "$NT" detour --seconds 5 --cpu "$cpu" --json "$tmp/fifo" >"$tmp/out" 2>"$tmp/err"
rc=$? t=$(($(ms) - t0))
[ $rc -eq 1 ] && grep -q "no process is reading the FIFO" "$tmp/err" && ok ||
	{ fail "FIFO without a reader: exit $rc, want 1 with a clear message"; cat "$tmp/err"; }
[ $t -lt 1000 ] && ok || fail "FIFO without a reader: failed after $t ms, not before the 5 s measurement"
[ -p "$tmp/fifo" ] && ok || fail "the FIFO was replaced after a failed open"

# --- '-' is stdout (the JSON instead of the table).
detour --json - >"$tmp/out" 2>"$tmp/err" && head -c 1 "$tmp/out" | grep -q '{' && ok ||
	{ fail "detour --json - does not print only JSON"; cat "$tmp/err"; }

# --- /dev/stdout is the descriptor: stdout redirected to a file gets the table then the JSON in
# that same file (same inode), and /dev/stdout is still the symlink it was.
stdout_kind=$(stat -c %F /dev/stdout)
: >"$tmp/so.txt"
ino=$(stat -c %i "$tmp/so.txt")
detour --json /dev/stdout >"$tmp/so.txt" 2>"$tmp/err" && ok || { fail "detour --json /dev/stdout"; cat "$tmp/err"; }
[ "$(stat -c %i "$tmp/so.txt")" = "$ino" ] && ok || fail "stdout's file was replaced, not written"
grep -q '^ cpu ' "$tmp/so.txt" && grep -q '"schema": "noisetool-noise/1"' "$tmp/so.txt" && ok ||
	{ fail "/dev/stdout: want the table and the JSON"; head -c 300 "$tmp/so.txt"; }
[ "$(awk '/^ cpu /{ print NR; exit }' "$tmp/so.txt")" -lt "$(awk '/"schema"/{ print NR; exit }' "$tmp/so.txt")" ] &&
	ok || fail "/dev/stdout: the JSON came before the table"
[ "$(stat -c %F /dev/stdout)" = "$stdout_kind" ] && [ -L /dev/stdout ] && ok ||
	fail "/dev/stdout changed: $(ls -l /dev/stdout)"
[ -c /dev/null ] && ok || fail "/dev/null is no longer a character device"

# --- A symlink to a file is written through: the file gets the JSON, the link stays a link.
echo old >"$tmp/real.json"
ln -s real.json "$tmp/link.json"
detour --json "$tmp/link.json" >/dev/null 2>"$tmp/err" && ok || { fail "detour --json SYMLINK"; cat "$tmp/err"; }
[ -L "$tmp/link.json" ] && [ "$(readlink "$tmp/link.json")" = real.json ] && ok || fail "the symlink was replaced"
grep -q '"schema": "noisetool-noise/1"' "$tmp/real.json" && ok || fail "the symlink's target did not get the JSON"
# A dangling symlink: its target is created beside it (a link out of its directory, or another
# user's, is refused: test-output-links.sh).
mkdir "$tmp/sub"
ln -s new.json "$tmp/dangling"
sim --noise freq=1kHz,length=1us --json "$tmp/dangling" >/dev/null 2>"$tmp/err" && ok ||
	{ fail "simulate --json DANGLING-SYMLINK"; cat "$tmp/err"; }
[ -L "$tmp/dangling" ] && grep -q '"results"' "$tmp/new.json" && ok || fail "dangling symlink not written through"
report --json "$tmp/link.json" >/dev/null 2>"$tmp/err" && [ -L "$tmp/link.json" ] &&
	grep -q '"rank_times"' "$tmp/real.json" && ok || { fail "report --json SYMLINK"; cat "$tmp/err"; }

# --- An output that is an input: refused before any work, the input unchanged.
ln "$tmp/t.tsv" "$tmp/t-hard.tsv"
ln -s t.tsv "$tmp/t-soft.tsv"
for out in "$tmp/t.tsv" "$tmp/t-hard.tsv" "$tmp/t-soft.tsv"; do
	expect_status 1 sim --signature "$tmp/t.tsv" --json "$out"
	grep -q "is the input '$tmp/t.tsv'" "$tmp/err" && ok || { fail "simulate: $out: message"; cat "$tmp/err"; }
done
run_checks expect_status 1 "$NT" run --mpi "${run_mpi:-}" --inject "trace=$tmp/t.tsv" --json "$tmp/t-soft.tsv" -- touch "$tmp/marker-inject"
run_checks test ! -e "$tmp/marker-inject" && ok || fail "run --json INJECTED-TRACE started the job"
# A trace the injector would refuse inside MPI_Init (a FIFO without a writer blocked its open,
# /dev/zero never ended): refused before the job starts, in one line.
mkfifo "$tmp/trace-fifo"
for t in "$tmp/trace-fifo" /dev/zero; do
	run_checks expect_status 2 timeout -k 2 20 "$NT" run --mpi "${run_mpi:-}" --inject "trace=$t" -- touch "$tmp/marker-trace"
	run_checks grep -q "trace '$t': not a regular file" "$tmp/err" && ok || { fail "run --inject trace=$t: message"; cat "$tmp/err"; }
done
run_checks test ! -e "$tmp/marker-trace" && ok || fail "run --inject trace=FIFO started the job"
cmp -s "$tmp/t.tsv" "$tmp/t.orig" && [ -L "$tmp/t-soft.tsv" ] && ok || fail "the input trace changed"
cmp -s "$log" "$tmp/job.orig" && ok || fail "the log changed"
# Two outputs of one command renamed over one file: refused, nothing written.
expect_status 1 detour --json "$tmp/same" --trace "$tmp/same"
[ ! -e "$tmp/same" ] && ok || fail "--json X --trace X wrote X"

# --- A directory as output file: refused before the work.
mkdir "$tmp/d"
expect_status 1 "$NT" detour --seconds 5 --cpu "$cpu" --json "$tmp/d"
grep -q "is a directory" "$tmp/err" && ok || { fail "directory: message"; cat "$tmp/err"; }
expect_status 1 "$NT" ftq --seconds 5 --cpu "$cpu" --trace "$tmp/d"
expect_status 1 sim --noise freq=1kHz,length=1us --json "$tmp/d"
expect_status 1 report --json "$tmp/d"
run_checks expect_status 1 "$NT" run --mpi "${run_mpi:-}" --json "$tmp/d" -- touch "$tmp/marker-dir"
[ ! -e "$tmp/marker-dir" ] && ok || fail "run --json DIR started the job"
[ -z "$(ls -A "$tmp/d")" ] && ok || fail "something was written into the directory"

# --- A missing directory: refused in well under a second, not after a 5 s measurement.
for sub in detour ftq; do
	t0=$(ms)
	expect_status 1 "$NT" $sub --seconds 5 --cpu "$cpu" --json /nonexistent/x.json
	t=$(($(ms) - t0))
	[ $t -lt 1000 ] && ok || fail "$sub --json /nonexistent/x.json failed after $t ms"
	grep -q "directory '/nonexistent' does not exist" "$tmp/err" && ok || { fail "$sub: message"; cat "$tmp/err"; }
done
run_checks expect_status 1 "$NT" run --mpi "${run_mpi:-}" --json /nonexistent/r.json -- touch "$tmp/marker-missing"
[ ! -e "$tmp/marker-missing" ] && ok || fail "run --json /nonexistent/r.json started the job"
# The report's other outputs too: --html (and without a Python that draws), --perfetto.
for o in --html --perfetto; do
	run_checks expect_status 1 "$NT" run --mpi "${run_mpi:-}" $o /nonexistent/r.out -- touch "$tmp/marker-missing$o"
	[ ! -e "$tmp/marker-missing$o" ] && ok || fail "run $o /nonexistent/r.out started the job"
done
NOISETOOL_PYTHON=/bin/false run_checks expect_status 1 "$NT" run --mpi "${run_mpi:-}" --html "$tmp/p.html" -- touch "$tmp/marker-nopy"
[ ! -e "$tmp/marker-nopy" ] && [ ! -e "$tmp/p.html" ] && ok || fail "run --html without matplotlib started the job"

# --- noisetool run --out: created with its parents before the job (a job that writes no log
# then ends the run with status 1, after the directory exists); a file in the way is refused
# before the job.
if [ -n "$have_run" ]; then
	"$NT" run --mpi "${run_mpi:-}" --out "$tmp/a/b" -- touch "$tmp/ran" >/dev/null 2>"$tmp/err"
	[ -d "$tmp/a/b" ] && [ -e "$tmp/ran" ] && ok || { fail "run --out a/b: not created"; cat "$tmp/err"; }
	expect_status 1 "$NT" run --mpi "${run_mpi:-}" --out "$tmp/t.orig/sub" -- touch "$tmp/marker-out"
	[ ! -e "$tmp/marker-out" ] && ok || fail "run --out FILE/sub started the job"
fi

no_temporaries "$tmp"
no_temporaries "$tmp/sub"

summary || exit 1
if [ ${#skipped[@]} -gt 0 ]; then
	nt_skip "${skipped[@]}"
fi
