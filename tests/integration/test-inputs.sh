#!/usr/bin/env bash
# Inputs that can neither hang the command nor grow it without bound (doc/noisetool.md,
# "Inputs"): a FIFO that no one writes, a device (/dev/zero) and an endless stdin given where a
# document, a signature, a LogGP file or a rank's live file is read each end at once with
# status 1 and one line saying why. Every command is bounded by timeout, so a regression to a
# blocking open or an endless read fails here instead of hanging the suite. The plotting helper
# is a stand-in (NOISETOOL_PYTHON) that counts what it is given, so that no matplotlib is
# needed; the real helper's own bound is checked with python3 alone.
set -u
NT=${1:?usage: test-inputs.sh NOISETOOL PLOT-DIR}
PLOT_DIR=${2:?}
. "$(dirname "$0")/../lib.sh"
nt_tmpdir
. "$(dirname "$0")/cli-check.sh"
skipped=()

mkfifo "$tmp/fifo" # never opened for writing by anyone
# in_time SECONDS CMD...: CMD, killed after SECONDS (status 124 or 137 then).
in_time() { timeout -k 2 "$@"; }

# A stand-in for `python3 -m noisetool_plot`: the check passes; a page holds the count of bytes
# it was given (it reads to the end, as the real helper did).
cat >"$tmp/fake-python" <<'EOF'
#!/bin/sh
case "$*" in *--check*) exit 0 ;; esac
echo "<html>$(wc -c) bytes</html>"
EOF
chmod +x "$tmp/fake-python"
export NOISETOOL_PYTHON=$tmp/fake-python

# plot_fails WHY JSON [REDIRECT-FROM]: noisetool plot detour JSON fails in time with status 1,
# one line with WHY, and no page.
plot_fails() {
	local why=$1 doc=$2 from=${3:-/dev/null}
	in_time 30 "$NT" plot detour "$doc" --html "$tmp/page.html" <"$from" >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	[ $rc -eq 1 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q "$why" "$tmp/err" && ok ||
		{ fail "plot detour $doc <$from: exit $rc, want 1 and one line with '$why'"; cat "$tmp/err"; }
	[ ! -e "$tmp/page.html" ] && ok || { fail "plot detour $doc <$from left a page"; rm -f "$tmp/page.html"; }
}

# --- plot's JSON: a FIFO without a writer is empty at once; a device is never read; stdin is
# read at most 64 MiB (and 1 byte).
plot_fails "empty" "$tmp/fifo"
plot_fails "not a regular file or a pipe" /dev/zero
plot_fails "larger than 64 MiB" - /dev/zero
# A document, from a file and through a pipe, still arrives whole.
printf '{"cpus": []}' >"$tmp/doc.json"
in_time 30 "$NT" plot detour "$tmp/doc.json" --html "$tmp/page.html" 2>"$tmp/err" &&
	grep -q '^<html>12 bytes</html>$' "$tmp/page.html" && ok || { fail "plot detour FILE"; cat "$tmp/err"; }
rm -f "$tmp/page.html"
in_time 30 "$NT" plot detour <(cat "$tmp/doc.json") --html "$tmp/page.html" 2>"$tmp/err" &&
	grep -q '^<html>12 bytes</html>$' "$tmp/page.html" && ok || { fail "plot detour <(PIPE)"; cat "$tmp/err"; }
rm -f "$tmp/page.html"
unset NOISETOOL_PYTHON

# The helper itself, run by hand on an endless stdin: it reads no more than its bound, with or
# without matplotlib (its memory capped, so that a regression fails instead of filling it).
if command -v python3 >/dev/null; then
	(ulimit -v 4000000 && cd "$PLOT_DIR" && in_time 60 python3 -m noisetool_plot detour </dev/zero) \
		>"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ $rc -eq 1 ] && grep -q "larger than 64 MiB" "$tmp/err" && ok ||
		{ fail "python3 -m noisetool_plot detour </dev/zero: exit $rc"; tail -3 "$tmp/err"; }
else
	skipped+=("no python3: the plotting helper's own bound was not checked")
fi

# --- simulate's signatures and LogGP file: the same FIFO and device (status 2: simulate takes
# a bad file for a bad argument).
sim() { in_time 30 "$NT" simulate --ranks 8 --collective barrier --sync "$@"; }
for sig in "$tmp/fifo" /dev/zero; do
	sim --signature "$sig" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ $rc -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && ok ||
		{ fail "simulate --signature $sig: exit $rc"; cat "$tmp/err"; }
done
grep -q "not a regular file or pipe" "$tmp/err" && ok || { fail "simulate --signature /dev/zero: message"; cat "$tmp/err"; }
for f in "$tmp/fifo" /dev/zero; do
	sim --noise freq=1kHz,length=1us --loggp-file "$f" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ $rc -eq 2 ] && grep -q "not a regular file" "$tmp/err" && ok ||
		{ fail "simulate --loggp-file $f: exit $rc"; cat "$tmp/err"; }
done

# --- noisetool run: a job that left a FIFO for a rank's live file. The command waits for the
# ranks that still run, reading each live file's header: the FIFO is no live file, the report
# then says so. Needs a wrapper library to preload (the job itself is no MPI program).
libs=$("$NT" version | sed -n 's/^wrapper libraries: //p')
case "$libs" in
*MPICH*) run_mpi=mpich ;;
*"Open MPI"*) run_mpi=openmpi ;;
*) run_mpi= ;;
esac
if [ -n "$run_mpi" ]; then
	mkdir "$tmp/out.d"
	in_time 60 "$NT" run --mpi "$run_mpi" --out "$tmp/out.d" -- sh -c \
		'd="$NOISETOOL_OUT/job-1-$NOISETOOL_JOB.live" && mkdir "$d" && mkfifo "$d/rank-0"' \
		>"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ $rc -eq 1 ] && grep -q "rank-0: not a live file" "$tmp/err" && ok ||
		{ fail "run with a FIFO for rank 0's live file: exit $rc, want 1"; cat "$tmp/err"; }
else
	skipped+=("no wrapper library in this build: the noisetool run case was not run")
fi

summary || exit 1
if [ ${#skipped[@]} -gt 0 ]; then
	nt_skip "${skipped[@]}"
fi
