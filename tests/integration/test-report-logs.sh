#!/usr/bin/env bash
# noisetool report with several logs, as the README's `noisetool report logs/prog-*.ntlog` gives
# them: each reported in turn under its heading, a bad one named on stderr without stopping the
# others (status 1); with --json a JSON array of the reports in order, each naming its log, and
# written only when every log was read; a log that is also the JSON output refused untouched.
# Two logs without --each are compared (doc/compare.md); with --each reported in turn.
set -u
NT=${1:?usage: test-report-logs.sh NOISETOOL MAKE-NTLOG PYTHON3}
MAKE=${2:?} PY=${3:?}
. "$(dirname "$0")/../lib.sh"
nt_tmpdir
. "$(dirname "$0")/cli-check.sh"

# report ARGS...: bounded (a reader that blocks fails here).
report() { timeout -k 2 30 "$NT" report "$@"; }

# Three logs of one program, as `noisetool run --out logs` names them: 2, 1 and 3 ranks.
mkdir "$tmp/logs"
a=$tmp/logs/prog-20250101-120000.ntlog b=$tmp/logs/prog-20250101-120512.ntlog
c=$tmp/logs/prog-20250101-121030.ntlog
"$MAKE" "$a" 2 && "$MAKE" "$b" 1 && "$MAKE" "$c" 3 || { fail "make-ntlog"; summary; exit 1; }

# The glob: each log in turn, in order, under its heading, each report whole.
report "$tmp"/logs/prog-*.ntlog --no-symbols >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] && [ ! -s "$tmp/err" ] && ok || { fail "three logs: exit $rc"; cat "$tmp/err"; }
grep -E '^(===|noisetool report:|[0-9]+ ranks?,)' "$tmp/out" >"$tmp/heads"
cat >"$tmp/want" <<EOF
=== log 1 of 3: $a ===
noisetool report: $a
2 ranks, level os, waits mpi, complete
=== log 2 of 3: $b ===
noisetool report: $b
1 rank, level os, waits mpi, complete
=== log 3 of 3: $c ===
noisetool report: $c
3 ranks, level os, waits mpi, complete
EOF
cmp -s "$tmp/heads" "$tmp/want" && ok || { fail "headings and reports out of order"; diff "$tmp/want" "$tmp/heads"; }
# Each report is the one its log gives alone.
k=0
for log in "$a" "$b" "$c"; do
	k=$((k + 1))
	report "$log" --no-symbols >"$tmp/alone" 2>/dev/null
	grep -q '^===' "$tmp/alone" && fail "one log printed a heading"
	awk -v h="=== log $k of 3: $log ===" '/^===/ { on = ($0 == h); next } on' "$tmp/out" |
		sed '$ { /^$/d }' >"$tmp/part"
	cmp -s "$tmp/part" "$tmp/alone" && ok || { fail "$log: its part differs from its report alone"; diff "$tmp/alone" "$tmp/part" | head; }
done

# A bad log among them: named on stderr (one line), noted under its heading, the others reported.
printf 'not a log\n' >"$tmp/logs/prog-20250101-120700.ntlog"
bad=$tmp/logs/prog-20250101-120700.ntlog
report "$tmp"/logs/prog-*.ntlog --no-symbols >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] && ok || fail "a bad log among four: exit $rc, want 1"
[ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -qF "noisetool report: $bad: not a noisetool log" "$tmp/err" && ok ||
	{ fail "the bad log's error"; cat "$tmp/err"; }
[ "$(grep -c '^noisetool report: ' "$tmp/out")" -eq 3 ] && ok || fail "the three good logs are not all reported"
grep -A1 -F "=== log 3 of 4: $bad ===" "$tmp/out" | grep -q '^not reported: not a noisetool log' && ok ||
	fail "no note under the bad log's heading"
grep -A1 -F "=== log 4 of 4: $c ===" "$tmp/out" | grep -qF "noisetool report: $c" && ok ||
	fail "the log after the bad one is not reported"
rm "$bad"

# --json FILE: an array of the reports in order, each the single log's document plus "log".
report "$a" "$b" "$c" --no-symbols --json "$tmp/all.json" >"$tmp/out" 2>"$tmp/err" &&
	grep -q '^=== log 3 of 3' "$tmp/out" && ok || { fail "--json FILE with three logs"; cat "$tmp/err"; }
for log in "$a" "$b" "$c"; do
	report "$log" --no-symbols --json "$tmp/$(basename "$log").json" >/dev/null 2>&1 || fail "$log --json"
done
"$PY" - "$tmp/all.json" "$a" "$b" "$c" <<'EOF' && ok || fail "the JSON array"
import json, os, sys
arr = json.load(open(sys.argv[1]))
logs = sys.argv[2:]
assert isinstance(arr, list) and len(arr) == 3, arr
for rep, log in zip(arr, logs):
    assert rep["log"] == log, (rep["log"], log)
    alone = json.load(open(os.path.join(os.path.dirname(sys.argv[1]), os.path.basename(log) + ".json")))
    assert "log" not in alone, "a single log's document changed"
    assert {k: v for k, v in rep.items() if k != "log"} == alone, log
assert [r["ranks"] for r in arr] == [2, 1, 3]
EOF
# --json -: the array alone on stdout (two logs: --each, else they are compared).
report "$a" "$b" --each --no-symbols --json - >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] && "$PY" -c 'import json, sys; a = json.load(open(sys.argv[1])); assert [r["ranks"] for r in a] == [2, 1]' "$tmp/out" &&
	ok || { fail "--json - with two logs and --each: exit $rc"; head -5 "$tmp/out"; cat "$tmp/err"; }

# A bad log with --json: no JSON anywhere, every bad log named, the others' text still printed.
mkdir "$tmp/json"
report "$a" "$tmp/missing.ntlog" "$b" /dev/null --no-symbols --json "$tmp/json/r.json" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] && [ -z "$(ls -A "$tmp/json")" ] && ok || { fail "--json FILE with bad logs: exit $rc, left $(ls "$tmp/json")"; }
grep -qF "$tmp/missing.ntlog: cannot read: No such file" "$tmp/err" && grep -qF "/dev/null: cannot read: not a regular file" "$tmp/err" &&
	grep -qF "2 of 4 logs could not be read: '$tmp/json/r.json' not written" "$tmp/err" && ok ||
	{ fail "--json FILE with bad logs: the messages"; cat "$tmp/err"; }
[ "$(grep -c '^noisetool report: ' "$tmp/out")" -eq 2 ] && ok || fail "--json FILE with bad logs: the text of the good ones"
report "$a" "$tmp/missing.ntlog" --each --no-symbols --json - >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] && [ ! -s "$tmp/out" ] && grep -q "their JSON not written" "$tmp/err" && ok ||
	{ fail "--json - with a bad log: exit $rc or stdout"; cat "$tmp/err"; }

# An input is never an output: a log named as the JSON file is refused before anything.
cp "$a" "$tmp/keep.ntlog"
ln -s "$a" "$tmp/link.json"
# (status 1, as every output rule: doc/noisetool.md, "Outputs"), whether reported or compared.
expect_status 1 report "$b" "$a" --each --no-symbols --json "$a"
expect_status 1 report "$b" "$a" --each --no-symbols --json "$tmp/link.json"
expect_status 1 report "$b" "$a" --no-symbols --json "$a"
expect_status 1 report "$b" "$a" --no-symbols --json "$tmp/link.json"
expect_status 1 report "$a" --no-symbols --html "$tmp/link.json"
cmp -s "$a" "$tmp/keep.ntlog" && ok || fail "the log named as the JSON output changed"

# Symbols on (addr2line over modules that are not there): several logs still report, bounded.
report "$a" "$b" --each >"$tmp/out" 2>"$tmp/err" && [ "$(grep -c '^noisetool report: ' "$tmp/out")" -eq 2 ] && ok ||
	{ fail "two logs with symbols"; cat "$tmp/err"; }

# Two logs without --each: B compared with A, as text, JSON and CSV; the ranks only one run has
# named; a log against itself changes nothing; a bad log is one line and status 1.
report "$a" "$c" --no-symbols --json "$tmp/cmp.json" --csv "$tmp/cmp" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] && [ ! -s "$tmp/err" ] && ok || { fail "two logs compared: exit $rc"; cat "$tmp/err"; }
grep -qx 'noisetool report: B compared with A' "$tmp/out" && ! grep -q '^=== log' "$tmp/out" &&
	grep -qF "A: $a (2 ranks" "$tmp/out" && grep -qF "B: $c (3 ranks" "$tmp/out" &&
	grep -qF "the runs have 2 and 3 ranks" "$tmp/out" && ok ||
	{ fail "the comparison's text"; cat "$tmp/out"; }
"$PY" - "$tmp/cmp.json" "$tmp/cmp" <<'EOF' && ok || fail "the comparison's JSON and CSV"
import csv, json, sys
doc = json.load(open(sys.argv[1]))
assert doc["schema"] == "noisetool-compare/1", doc["schema"]
assert doc["a"]["ranks"] == 2 and doc["b"]["ranks"] == 3
assert doc["only"] == {"sites_a": 0, "sites_b": 0, "ranks_a": 0, "ranks_b": 1}, doc["only"]
ranks = {r["rank"]: r["delay_ns"]["verdict"] for r in doc["ranks"]}
assert ranks[2] == "only in B", ranks
assert {s["function"] for s in doc["sites"]} == {"MPI_Allreduce", "MPI_Barrier"}
assert all(s["mean_ns"]["verdict"] == "few calls" for s in doc["sites"]), doc["sites"]
rows = list(csv.DictReader(open(sys.argv[2] + "/compare-sites.csv")))
assert [r["function"] for r in rows] == [s["function"] for s in doc["sites"]]
rows = list(csv.DictReader(open(sys.argv[2] + "/compare-ranks.csv")))
assert len(rows) == 3
EOF
report "$a" "$a" --no-symbols --json - >"$tmp/self.json" 2>"$tmp/err" &&
	"$PY" -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["summary"][0].startswith("no significant change"); assert all(r["delay_ns"]["change"] == 0 for r in d["ranks"])' "$tmp/self.json" &&
	ok || { fail "a log compared with itself"; cat "$tmp/err"; }
report "$a" "$tmp/missing.ntlog" --no-symbols >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -qF "$tmp/missing.ntlog: cannot read" "$tmp/err" && ok ||
	{ fail "comparing with a missing log: exit $rc"; cat "$tmp/err"; }

summary
