# Sourced by the call-site tests. With LIB, PROG, NT and N set: runs PROG N on 2 ranks
# (-bind-to core) without and with the library preloaded, fails if the results differ, prints
# the report of the job's log and leaves its call-site table in $tmp/report. Sets tmp, fail
# and run (mpiexec with a timeout); exits 77 without mpiexec.
command -v mpiexec >/dev/null || { echo "SKIP: no mpiexec"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
run() { timeout 120 mpiexec -n 2 -bind-to core "$@"; }
run "$PROG" $N >"$tmp/plain" 2>&1 || { echo "FAIL: plain run"; exit 1; }
run -genv LD_PRELOAD "$LIB" -genv NOISETOOL_OUT "$tmp" -genv NOISETOOL_SUMMARY 0 "$PROG" $N \
	>"$tmp/pre" 2>"$tmp/pre.err" || { echo "FAIL: preloaded run"; cat "$tmp/pre.err"; exit 1; }
cmp -s "$tmp/plain" "$tmp/pre" || { echo "FAIL: results differ"; fail=1; }
"$NT" report "$(ls "$tmp"/*.ntlog | head -n 1)" --top 0 >"$tmp/report" || { echo "FAIL: report"; exit 1; }
cat "$tmp/report"
sed -i -n '/^Call sites by MPI time/,/^$/p' "$tmp/report" # the call-site table only
