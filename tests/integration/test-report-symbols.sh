#!/usr/bin/env bash
# noisetool report names thousands of call sites exactly as addr2line run by hand does, with one
# addr2line per module (not per site): 24 modules (a PIE, a fixed-address executable, a shared
# library, 21 names of one program so that the 16 live addr2line processes are recycled) and
# module names that are a FIFO, a directory, a missing file and a text file (no hang, no
# warning). Without addr2line, or with one that dies, the names are module+offset, as with
# --no-symbols, with one warning. The time is printed, not asserted: the number of addr2line
# processes is what does not depend on the machine.
set -u
NT=${1:?usage: test-report-symbols.sh NOISETOOL MAKE-NTLOG NOPIE-PROGRAM PYTHON3 SYMBOLS-EXPECT.PY}
MAKE=${2:?} NOPIE=${3:?} PY=${4:?} EXPECT=${5:?}
. "$(dirname "$0")/../lib.sh"
nt_tmpdir
. "$(dirname "$0")/cli-check.sh"

A2L=$(command -v addr2line) || nt_skip "no addr2line (binutils)"
PER_MODULE=120
FUNCTIONS=3 # symbols-expect.py gives each site one of three MPI functions

# The modules. The report merges sites by the module's base name, so every name is distinct.
libc=$(ldd "$NT" | awk '/libc\.so/ { print $3 }')
[ -f "$libc" ] || { fail "no libc in 'ldd $NT'"; summary; exit 1; }
modules=("$NT" "$NOPIE" "$libc")
for i in $(seq -w 1 21); do
	ln -s "$NT" "$tmp/prog$i" && modules+=("$tmp/prog$i")
done
"$PY" -c 'import sys; sys.exit(0 if open(sys.argv[1], "rb").read(18)[16] == 2 else 1)' "$NOPIE" ||
	echo "note: $NOPIE is not a fixed-address (ET_EXEC) executable on this compiler"
mkfifo "$tmp/fifo"
mkdir "$tmp/dir"
echo "not an object file" >"$tmp/text"
odd=("$tmp/fifo" "$tmp/dir" "$tmp/missing" "$tmp/text")

"$PY" "$EXPECT" sites "$tmp/sites" $PER_MODULE "${modules[@]}" &&
	"$PY" "$EXPECT" sites "$tmp/odd-sites" 10 "${odd[@]}" && cat "$tmp/odd-sites" >>"$tmp/sites" &&
	"$MAKE" "$tmp/many.ntlog" 2 "$tmp/sites" || { fail "making the log"; summary; exit 1; }
nsites=$(wc -l <"$tmp/sites")

# An addr2line that counts its starts, in front of the real one.
mkdir "$tmp/bin"
printf '#!/bin/sh\necho started >>"%s"\nexec "%s" "$@"\n' "$tmp/starts" "$A2L" >"$tmp/bin/addr2line"
chmod +x "$tmp/bin/addr2line"

# report LABEL PATH [OPTION]: the report of the log as JSON in $tmp/LABEL.json with PATH,
# bounded in time (a FIFO opened, or an addr2line waited for without end, fails here); stderr in
# $tmp/LABEL.err.
report() {
	local label=$1 path=$2
	shift 2
	local t0 t1 rc
	t0=$(date +%s.%N)
	timeout -k 5 120 env PATH="$path" "$NT" report "$tmp/many.ntlog" --top 0 --late 0 \
		--json "$tmp/$label.json" "$@" >/dev/null 2>"$tmp/$label.err"
	rc=$?
	t1=$(date +%s.%N)
	echo "$label: exit $rc in $(echo "$t1 - $t0" | bc) s"
	# The modules that are not files the job could have run (tools/modcheck.c) are said once
	# each; the rest of stderr is what addr2line's handling said.
	grep "^noisetool report: module " "$tmp/$label.err" >"$tmp/$label.modules"
	grep -v "^noisetool report: module " "$tmp/$label.err" >"$tmp/$label.rest"
	mv "$tmp/$label.rest" "$tmp/$label.err"
	[ $rc -eq 0 ] || { fail "$label: exit $rc ($([ $rc -eq 124 ] && echo hung || head -c 300 "$tmp/$label.err"))"; return 1; }
}

# The names, against addr2line by hand; the processes it took.
if report symbols "$tmp/bin:$PATH"; then
	ok
	"$PY" "$EXPECT" check "$tmp/symbols.json" 12 && ok || fail "names differ from addr2line's"
	[ -s "$tmp/symbols.err" ] && { fail "warnings with a working addr2line"; cat "$tmp/symbols.err"; }
	# The FIFO, the directory and the missing file, each named once; no module the job ran.
	[ "$(wc -l <"$tmp/symbols.modules")" -eq 3 ] && grep -q "$tmp/fifo is not a regular file" "$tmp/symbols.modules" &&
		grep -q "$tmp/dir is not a regular file" "$tmp/symbols.modules" &&
		grep -q "$tmp/missing: No such file" "$tmp/symbols.modules" && ok ||
		{ fail "module warnings: want the FIFO, the directory and the missing file"; cat "$tmp/symbols.modules"; }
	starts=$(wc -l <"$tmp/starts")
	# Sites are asked by function, then module: each module's addr2line starts at most once a
	# function (the 24 modules do not fit in 16 processes), the text file once (then given up).
	bound=$((FUNCTIONS * ${#modules[@]} + 1))
	echo "$nsites call sites in $((${#modules[@]} + ${#odd[@]})) modules: $starts addr2line processes (at most $bound)"
	[ "$starts" -le "$bound" ] && ok || fail "$starts addr2line processes for $nsites call sites, want <= $bound"
	grep -q '^MPI_[A-Za-z]* 0x[0-9a-f]* '"$NOPIE"'$' "$tmp/sites" &&
		"$PY" -c '
import json, sys
sites = [s for s in json.load(open(sys.argv[1]))["sites"] if s["module"] == sys.argv[2]]
named = [s for s in sites if "+0x" not in s["location"] and ".c:" in s["location"]]
print("%d of %d sites of the fixed-address executable named file:line" % (len(named), len(sites)))
sys.exit(0 if sites and len(named) * 2 > len(sites) else 1)' "$tmp/symbols.json" "$NOPIE" && ok ||
		fail "the fixed-address executable's sites are not named"
fi

# The same log without names: the control for the fallbacks below.
report plain "$PATH" --no-symbols && ok

# No addr2line: every site module+offset, one warning.
mkdir "$tmp/empty"
if report missing "$tmp/empty"; then
	cmp -s "$tmp/missing.json" "$tmp/plain.json" && ok || fail "without addr2line: not the --no-symbols names"
	[ "$(wc -l <"$tmp/missing.err")" -eq 1 ] && grep -q "noisetool report: cannot run addr2line" "$tmp/missing.err" &&
		ok || { fail "without addr2line: not one warning"; cat "$tmp/missing.err"; }
fi

# An addr2line that dies at its first address: module+offset, one warning, no hang.
mkdir "$tmp/dying"
printf '#!/bin/sh\nread a\nkill -KILL $$\n' >"$tmp/dying/addr2line"
chmod +x "$tmp/dying/addr2line"
if report dying "$tmp/dying:$PATH"; then
	cmp -s "$tmp/dying.json" "$tmp/plain.json" && ok || fail "dying addr2line: not the --no-symbols names"
	[ "$(wc -l <"$tmp/dying.err")" -eq 1 ] && grep -q "killed by signal 9" "$tmp/dying.err" &&
		ok || { fail "dying addr2line: not one warning"; cat "$tmp/dying.err"; }
fi

summary
