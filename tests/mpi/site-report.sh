# Sourced by the call-site tests. With LIB, PROG, NT and N set: runs PROG N on 2 ranks (bound
# inside the affinity mask) without and with the library preloaded, fails if the results
# differ, prints the report of the job's log and leaves its call-site table in $tmp/report.
# Sets tmp, fail and run (mpiexec with a timeout); exits 77 without mpiexec.
. "$(dirname "$0")/../lib.sh"
nt_need_mpiexec
nt_tmpdir
fail=0
run() { timeout 120 mpiexec -n 2 $(nt_bind 2) "$@"; }
run "$PROG" $N >"$tmp/plain" 2>&1 || { echo "FAIL: plain run"; cat "$tmp/plain"; exit 1; }
run -genv LD_PRELOAD "$(nt_preload "$LIB")" -genv NOISETOOL_OUT "$tmp" -genv NOISETOOL_SUMMARY 0 \
	"$PROG" $N >"$tmp/pre" 2>"$tmp/pre.err" || { echo "FAIL: preloaded run"; cat "$tmp/pre.err"; exit 1; }
cmp -s "$tmp/plain" "$tmp/pre" || { echo "FAIL: results differ"; diff "$tmp/plain" "$tmp/pre"; fail=1; }
"$NT" report "$(ls "$tmp"/*.ntlog | head -n 1)" --top 0 >"$tmp/report" || { echo "FAIL: report"; exit 1; }
cat "$tmp/report"
sed -i -n '/^Call sites by MPI time/,/^$/p' "$tmp/report" # the call-site table only
