#!/usr/bin/env bash
# The injector never takes a signal the application handles (issue 38 item 6): with a handler
# on SIGRTMIN+4 installed before MPI_Init, the injector takes another signal, injects, and
# every signal the program raises reaches the program's handler; with one installed after
# MPI_Init, over the injector's, the injector stops, says so in one line, and leaves the
# handler in place, so that a signal after MPI_Finalize is handled (the handler was reset to the
# default there, and that signal killed the program).
#
#   test-inject-signal.sh LIB PROGRAM NOISETOOL        PROGRAM: signals
set -u
LIB=${1:?usage: test-inject-signal.sh LIB PROGRAM NOISETOOL}
PROG=${2:?}
NT=${3:?}
. "$(dirname "$0")/../lib.sh"
nt_need_mpiexec
nt_tmpdir
fail=0
run() { timeout 120 mpiexec -n 2 $(nt_bind 2) "$@"; }

for when in before after; do
	run "$PROG" "$when" >"$tmp/plain-$when.out" 2>"$tmp/plain-$when.err" ||
		{ echo "FAIL: plain run ($when)"; cat "$tmp/plain-$when.out" "$tmp/plain-$when.err"; exit 1; }
	mkdir "$tmp/$when"
	run -genv LD_PRELOAD "$(nt_preload "$LIB")" -genv NOISETOOL_OUT "$tmp/$when" \
		-genv NOISETOOL_SUMMARY 0 -genv NOISETOOL_INJECT period=5ms,detour=200us \
		"$PROG" "$when" >"$tmp/$when.out" 2>"$tmp/$when.err"
	rc=$?
	cat "$tmp/$when.out" "$tmp/$when.err"
	[ $rc -eq 0 ] || { echo "FAIL: handler installed $when MPI_Init: the job failed ($rc)"; fail=1; }
	n=$(grep -c "raised 11 handled" "$tmp/$when.out")
	[ "$n" -eq 2 ] || { echo "FAIL: $when: $n ranks of 2 ran to the end"; fail=1; }
	grep '^result' "$tmp/plain-$when.out" | sort >"$tmp/a"
	grep '^result' "$tmp/$when.out" | sort >"$tmp/b"
	cmp -s "$tmp/a" "$tmp/b" || { echo "FAIL: $when: results differ"; fail=1; }
	said=$(grep -c "noisetool: NOISETOOL_INJECT on rank .*installed its own handler on signal" "$tmp/$when.err")
	if [ "$when" = before ]; then
		# The program's handler saw exactly its own signals; the injector ran on another.
		n=$(grep -c "raised 11 handled 11$" "$tmp/$when.out")
		[ "$n" -eq 2 ] || { echo "FAIL: before: a rank's handler missed or got extra signals"; fail=1; }
		[ "$said" -eq 0 ] || { echo "FAIL: before: the injector says it was displaced"; fail=1; }
		log=$(ls "$tmp/$when"/*.ntlog 2>/dev/null | head -n 1)
		if [ -z "$log" ] || ! timeout 60 "$NT" report "$log" --json "$tmp/r.json" >/dev/null 2>&1; then
			echo "FAIL: before: no readable log"
			fail=1
		elif ! python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
counts = [k["injected_count"] for k in r["rank_times"]]
print("injected detours per rank:", counts)
sys.exit(0 if all(c > 0 for c in counts) else 1)' "$tmp/r.json"; then
			echo "FAIL: before: the injector did not inject on its own signal"
			fail=1
		fi
	else
		[ "$said" -eq 1 ] || { echo "FAIL: after: $said lines say the injector was displaced, want 1"; fail=1; }
	fi
done
exit $fail
