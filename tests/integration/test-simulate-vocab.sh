#!/usr/bin/env bash
# noisetool simulate's noise vocabulary and LogGP files: every spelling of --noise simulates the
# same comb, the old one with one deprecation line, mixes refused in one line naming the keys;
# mode= against --sync/--unsync; --loggp-file and the default file read back, shown by
# `noisetool version`, a corrupt one refused. With "calibrate": a short real --calibrate whose
# saved file is read back (77 without mpiexec, or when the machine is too busy to trust it).
set -u
NT=${1:?usage: test-simulate-vocab.sh path/to/noisetool [calibrate]}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/cli-check.sh"
export XDG_CONFIG_HOME=$tmp/config # never the user's own file
mkdir -p "$XDG_CONFIG_HOME/noisetool"

# same A B: two JSON results equal but for the wall-clock keys.
same() {
	cmp -s <(grep -vE '"(events_per_s|seconds)"' "$1") <(grep -vE '"(events_per_s|seconds)"' "$2")
}
sim() { "$NT" simulate --ranks 1024,4096 --collective allreduce --iterations 3 --compute-us 50 "$@"; }

if [ "${2:-}" = calibrate ]; then
	"$NT" version | grep -q "mpi yes" || { echo "SKIP: noisetool built without MPI"; exit 77; }
	command -v mpiexec.mpich >/dev/null || command -v mpiexec >/dev/null ||
		{ echo "SKIP: no mpiexec"; exit 77; }
	f=$XDG_CONFIG_HOME/noisetool/loggp.json
	"$NT" simulate --calibrate --repetitions 5 --save-loggp "$f" >"$tmp/cal" 2>"$tmp/err"
	rc=$?
	cat "$tmp/cal" "$tmp/err"
	if [ $rc -ne 0 ] && grep -q "cannot be trusted" "$tmp/err"; then
		echo "SKIP: the machine is too busy for a calibration to agree"
		exit 77
	fi
	[ $rc -eq 0 ] && ok || fail "--calibrate exited $rc"
	[ "$(grep -cE '^ +[0-9]+ +[0-9.]+ +[0-9.]+ ' "$tmp/cal")" -eq 5 ] && ok || fail "five repetitions printed"
	grep -q '^G (ns/B) ' "$tmp/cal" && ok || fail "the spread table"
	line=$(sed -n 's/^--loggp //p' "$tmp/cal")
	grep -q "\"loggp\": \"$line\"" "$f" && ok || fail "the file holds the printed --loggp $line"
	"$NT" version | grep -q "^loggp: .* from $f, calibrated " && ok || fail "version names $f"
	sim --noise period=1ms,detour=25us --sync --json "$tmp/a.json" >/dev/null &&
		sim --noise period=1ms,detour=25us --sync --loggp "$line" --json "$tmp/b.json" \
			>/dev/null && same "$tmp/a.json" "$tmp/b.json" && ok ||
		fail "the default file's values are the ones used"
	summary
	exit
fi

# Every spelling of 1 kHz x 25 us gives the same results.
sim --noise period=1ms,detour=25us --unsync --json "$tmp/inj.json" >/dev/null 2>"$tmp/err" &&
	[ ! -s "$tmp/err" ] && ok || { fail "the injector's spelling"; cat "$tmp/err"; }
for spec in period=1000,detour=25 detour=25us,period=1ms freq=1kHz,length=25us \
	freq=1000,duration=25000ns period=1ms,detour=25us,mode=unsync; do
	sim --noise "$spec" --unsync --json "$tmp/x.json" >/dev/null 2>"$tmp/err" &&
		[ ! -s "$tmp/err" ] && same "$tmp/inj.json" "$tmp/x.json" && ok ||
		{ fail "--noise $spec simulates what period=1ms,detour=25us does"; cat "$tmp/err"; }
done
# The old spelling: the same, and one line saying what to write instead.
sim --noise freq=1kHz,period=25us --unsync --json "$tmp/x.json" >/dev/null 2>"$tmp/err" &&
	same "$tmp/inj.json" "$tmp/x.json" && ok || fail "the old spelling still works"
[ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q "deprecated.*freq=F,length=D" "$tmp/err" && ok ||
	{ fail "one deprecation line"; cat "$tmp/err"; }
# mode= stands for --sync / --unsync; a conflict is refused.
sim --noise period=1ms,detour=25us,mode=sync --json "$tmp/m.json" >/dev/null &&
	sim --noise period=1ms,detour=25us --sync --json "$tmp/s.json" >/dev/null &&
	same "$tmp/m.json" "$tmp/s.json" && ok || fail "mode=sync is --sync"
sim --noise period=1ms,detour=25us,mode=sync --sync >/dev/null && ok || fail "mode=sync --sync"
expect_status 2 sim --noise period=1ms,detour=25us,mode=sync --unsync
expect_status 2 sim --noise period=1ms,detour=25us,mode=unsync --sync-unsync
expect_status 2 sim --noise period=1ms,detour=25us
# Ambiguous, mixed, incomplete, impossible: one line naming the keys or the numbers.
for spec in freq=1kHz,period=25us,detour=3us period=1ms,length=2us freq=1kHz,detour=2us \
	detour=1us,length=2us period=1ms,period=2ms period=2ms freq=1kHz,length=25 \
	freq=1kHz,length=2ms period=1ms,detour=25us,ranks=1 trace=x.tsv; do
	expect_status 2 sim --noise "$spec" --sync
done
"$NT" simulate --ranks 4 --collective barrier --noise freq=1kHz,period=25us,detour=3us \
	--sync 2>&1 | grep -q "period=.*detour=" && ok || fail "the refusal names the keys"
"$NT" simulate --ranks 4 --collective barrier --noise freq=1kHz,length=2ms --sync 2>&1 |
	grep -q "2 ms detour is not shorter than its period, 1 ms" && ok ||
	fail "the refusal names the numbers"

# LogGP files: none -> the built-in values, said by version.
"$NT" version | grep -q "^loggp: 22,78,71,0.123 .*built in" && ok || fail "version: built in"
cat >"$tmp/lg.json" <<'JSON'
{ "schema": "noisetool-loggp/1", "loggp": "100,200,300,1.5", "date": "2026-01-02T03:04:05Z",
  "host": "testhost", "cpu": "x", "mpi": "MPICH 4.0.2" }
JSON
sim --noise period=1ms,detour=25us --sync --loggp-file "$tmp/lg.json" --json "$tmp/f.json" \
	>/dev/null && sim --noise period=1ms,detour=25us --sync --loggp 100,200,300,1.5 \
	--json "$tmp/o.json" >/dev/null && same "$tmp/f.json" "$tmp/o.json" && ok ||
	fail "--loggp-file gives the file's values"
same "$tmp/f.json" "$tmp/s.json" && fail "the file's values changed nothing" || ok
cp "$tmp/lg.json" "$XDG_CONFIG_HOME/noisetool/loggp.json"
sim --noise period=1ms,detour=25us --sync --json "$tmp/d.json" >/dev/null &&
	same "$tmp/f.json" "$tmp/d.json" && ok || fail "the default file is read"
"$NT" version | grep -q "^loggp: 100,200,300,1.5 .* from $XDG_CONFIG_HOME/noisetool/loggp.json, calibrated 2026-01-02T03:04:05Z on testhost" &&
	ok || { fail "version names the default file"; "$NT" version | grep loggp; }
sim --noise period=1ms,detour=25us --sync --loggp 22,78,71,0.123 --json "$tmp/l.json" \
	>/dev/null && same "$tmp/l.json" "$tmp/s.json" && ok || fail "--loggp beats the default file"
expect_status 2 sim --noise period=1ms,detour=25us --sync --loggp 1,2,3,4 --loggp-file "$tmp/lg.json"
# Corrupt or missing files are refused in one line, the default one too.
echo '{ "schema": "noisetool-loggp/1", "loggp": "1,2,3", "date": "x" }' >"$tmp/bad.json"
expect_status 2 sim --noise period=1ms,detour=25us --sync --loggp-file "$tmp/bad.json"
echo '{ "schema": "noisetool-loggp/1", ' >"$tmp/bad2.json"
expect_status 2 sim --noise period=1ms,detour=25us --sync --loggp-file "$tmp/bad2.json"
expect_status 1 sim --noise period=1ms,detour=25us --sync --loggp-file "$tmp/none.json"
cp "$tmp/bad.json" "$XDG_CONFIG_HOME/noisetool/loggp.json"
expect_status 2 sim --noise period=1ms,detour=25us --sync
"$NT" version | grep -q "^loggp: .*unusable" && ok || fail "version: the default file is unusable"
# --calibrate's own options; its output is checked before anything is measured.
expect_status 2 "$NT" simulate --calibrate --ranks 4
expect_status 2 "$NT" simulate --calibrate --repetitions 0
expect_status 1 "$NT" simulate --calibrate --save-loggp "$tmp/missing/dir/loggp.json"
expect_status 1 "$NT" simulate --calibrate --save-loggp "$tmp"
summary
