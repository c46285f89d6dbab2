#!/usr/bin/env bash
# noisetool report --csv DIR: every value of every table equals the JSON report of the same log
# (read with Python's csv module: RFC 4180, a header row), a location with a comma, a quote and a
# byte that is not UTF-8 survives the quoting; a DIR that is a file is refused before any log is
# read; a failed write leaves the tables that were there.
#
#   test-csv.sh NOISETOOL MAKE_NTLOG
set -u
NT=${1:?usage: test-csv.sh NOISETOOL MAKE_NTLOG}
MAKE=${2:?}
. "$(dirname "$0")/../lib.sh"
nt_tmpdir
fail=0
nt_need_python "read the tables"

# compare DIR JSON NAME: every CSV row and column against the JSON report.
compare() {
	"$PY" - "$1" "$2" "$3" <<'EOF'
import csv, json, sys
d, rep, name = sys.argv[1], json.load(open(sys.argv[2])), sys.argv[3]
CAUSES = [c["json"] for c in rep["causes"]]  # the report's own list (NT_CAUSES)
bad = 0
def fail(msg):
    global bad
    if bad < 20:
        print(f"FAIL: {name}: {msg}")
    bad += 1

def read(file):
    raw = open(f"{d}/{file}", "rb").read()
    if raw and not raw.endswith(b"\r\n"):
        fail(f"{file}: rows do not end with CRLF")
    with open(f"{d}/{file}", newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    return rows[0], [dict(zip(rows[0], r)) for r in rows[1:]], rows[1:]

def same(file, i, col, csv_value, want):
    if isinstance(want, bool):
        ok = csv_value == str(int(want))
    elif isinstance(want, int):
        ok = csv_value == str(want)
    elif isinstance(want, float):
        ok = csv_value != "" and float(csv_value) == want
    else:
        ok = csv_value == want
    if not ok:
        fail(f"{file} row {i} {col}: {csv_value!r}, the JSON has {want!r}")

def table(file, objs, columns, extra=lambda o: {}, limit=None):
    head, rows, raw = read(file)
    rows, raw = rows[:limit], raw[:limit]
    if head != columns:
        fail(f"{file}: header {head}, want {columns}")
    if any(len(r) != len(head) for r in raw):
        fail(f"{file}: a row without {len(head)} fields")
    if len(rows) != len(objs):
        fail(f"{file}: {len(rows)} rows, the JSON has {len(objs)}")
    for i, (row, o) in enumerate(zip(rows, objs)):
        want = dict(o)
        want.update(want.pop("causes", {}))
        want.update(extra(o))
        for col in columns:
            same(file, i, col, row[col], want.get(col, ""))
    return rows

cov_cols = ["rank", "mpi_ns", "collective_ns", "own_cost_ns", "over_own_cost_ns",
            "late_arrivals_ns", "held_inside_ns", "with_cause_ns", "unexplained_ns",
            "not_measured_ns", "not_accounted_ns"]
cov = rep["coverage"]
table("coverage.csv", [dict(cov, rank="all")] + [dict(c, rank=str(c["rank"])) for c in cov["ranks"]],
      cov_cols)
site_cov_cols = ["function", "location"] + cov_cols[1:]
table("coverage-sites.csv", cov["sites"], site_cov_cols)
for k in cov_cols[1:]:  # the collective sites add up to the job, and each row to itself
    if k != "mpi_ns" and sum(c[k] for c in cov["sites"]) != cov[k]:
        fail(f"coverage: the sites' {k} do not add up to the job's")
for c in [cov] + cov["ranks"] + cov["sites"]:
    if (c["late_arrivals_ns"] + c["held_inside_ns"] !=
            c["with_cause_ns"] + c["unexplained_ns"] + c["not_measured_ns"]):
        fail(f"coverage: the late arrivals' and holds' parts do not add up: {c}")
    if c["late_arrivals_ns"] + c["held_inside_ns"] + c["not_accounted_ns"] != c["over_own_cost_ns"]:
        fail(f"coverage: late arrivals, holds and the rest are not the time over the own cost: {c}")
    if c["own_cost_ns"] + c["over_own_cost_ns"] != c["collective_ns"]:
        fail(f"coverage: own cost and the time over it are not the collectives' time: {c}")
    if c["collective_ns"] > c["mpi_ns"]:
        fail(f"coverage: more time in collectives than in MPI: {c}")
for k in ["mpi_ns", "collective_ns", "own_cost_ns", "over_own_cost_ns", "late_arrivals_ns",
          "held_inside_ns", "with_cause_ns", "unexplained_ns", "not_measured_ns"]:
    if sum(c[k] for c in cov["ranks"]) != cov[k]:
        fail(f"coverage: the ranks' {k} do not add up to the job's")
site_cols = ["function", "location", "module", "offset", "calls", "time_ns_total",
             "time_ns_max", "time_ns_max_rank", "bytes_total", "bytes_per_call", "max_rank",
             "ranks_calling", "cov", "language", "file", "line", "caller", "python_call"]
table("sites.csv", rep["sites"], site_cols)
flags = {"unfinished": "unfinished_ranks", "aborted": "aborted_ranks",
         "missing": "missing_ranks", "running": "running_ranks",
         "unwritten": "unwritten_ranks"}
rank_cols = ["rank", "host", "wall_ns", "mpi_ns", "dropped_calls", "records", "dropped_records",
             "untimed_instances", "unregistered_persistent", "unknown_comm_records",
             "probe_reads", "probe_read_ns", "probe_pct", "injected_ns", "injected_count",
             "unfinished", "aborted", "missing", "running", "unwritten", "cpus", "cpu_ns",
             "run_delay_ns", "cpus_busy_ns", "cpus_steal_ns", "ranks_within", "on_cpu_share",
             "waited_share", "job_share", "others_share", "steal_share"]
cpu_keys = {"cpus": "list", "cpu_ns": "cpu_ns", "run_delay_ns": "run_delay_ns",
            "cpus_busy_ns": "busy_ns", "cpus_steal_ns": "steal_ns",
            "ranks_within": "ranks_within", "on_cpu_share": "on_cpu_share",
            "waited_share": "waited_share", "job_share": "job_share",
            "others_share": "others_share", "steal_share": "steal_share"}
table("ranks.csv", rep["rank_times"], rank_cols,
      lambda o: dict({k: o["rank"] in rep[v] for k, v in flags.items()},
                     **{k: o["cpus"].get(v, "") for k, v in cpu_keys.items()}))
others = [dict(t, rank=k["rank"], host=k["host"], partial=k["cpus"]["others"]["partial"],
               from_ns=k["cpus"]["others"]["from_ns"],
               run_delay_ns=k["cpus"]["others"].get("run_delay_ns", ""))
          for k in rep["rank_times"] if "others" in k["cpus"] for t in k["cpus"]["others"]["tasks"]]
table("other-tasks.csv", others, ["rank", "host", "pid", "comm", "kind", "run_ns", "share",
                                  "job_rank", "partial", "from_ns", "run_delay_ns"])
table("culprits.csv", rep["culprits"], ["rank", "host", "delay_ns", "instances"] + CAUSES)
table("culprit-nodes.csv", rep["culprit_nodes"], ["host", "delay_ns", "instances"] + CAUSES)
table("culprit-sites.csv", rep["culprit_sites"],
      ["function", "location", "delay_ns", "instances"] + CAUSES)
# late.csv has every late instance; the JSON the 1000 latest (largest delay first, as here).
host = {r["rank"]: r["host"] for r in rep["rank_times"]}
late_cols = ["comm_id", "seq", "time_ns", "last_rank", "last_host", "members", "function",
             "location", "delay_ns"] + CAUSES
rows = table("late.csv", rep["late_instances"], late_cols,
             lambda o: {"last_host": host[o["last_rank"]]}, len(rep["late_instances"]))
_, all_rows, _ = read("late.csv")
if len(all_rows) != rep["attribution"]["instances_late"]:
    fail(f"late.csv: {len(all_rows)} rows, {rep['attribution']['instances_late']} late "
         "instances")
if not bad:
    print(f"{name}: {len(rep['sites'])} sites, {len(rep['rank_times'])} ranks, "
          f"{len(rep['culprits'])} culprits, {len(all_rows)} late instances: as the JSON says")
sys.exit(1 if bad else 0)
EOF
}

# report LOG NAME: the tables and the JSON of one log, compared.
report() {
	if ! "$NT" report "$1" --no-symbols --json "$tmp/$2.json" --csv "$tmp/$2" >/dev/null \
		2>"$tmp/err"; then
		echo "FAIL: $2: noisetool report --csv failed:"
		cat "$tmp/err"
		fail=1
		return
	fi
	compare "$tmp/$2" "$tmp/$2.json" "$2" || fail=1
}

for n in 1 3 17; do
	"$MAKE" "$tmp/r$n.ntlog" $n || { echo "FAIL: make-ntlog $n"; exit 1; }
	report "$tmp/r$n.ntlog" "r$n"
done

# A real job of log version 7 (the fuzz seed: 4 ranks two to a CPU): the other tasks on each
# rank's CPUs, the rank beside it among them, read from MPI_Init (before version 9).
report "$(dirname "$0")/../../fuzz/corpus/ntlog/mpi-4ranks-2cpus-v7.ntlog" v7
tr -d '\r' <"$tmp/v7/other-tasks.csv" | grep -Eq ',process,[0-9]+,[0-9.e+-]+,[0-9]+,0,0,[0-9]+$' ||
	{ echo "FAIL: other-tasks.csv names no rank of the job:"; cat "$tmp/v7/other-tasks.csv"; fail=1; }

# Call sites whose location (module+offset without symbols) holds a comma, quotes and a byte
# that is not UTF-8 (U+FFFD in both), and 300 more: every field survives the quoting.
{
	printf 'MPI_Allreduce 0x10 /opt/my,app "v2".so\n'
	printf 'MPI_Bcast 0x20 /opt/odd\xffname.so\n'
	printf 'MPI_Barrier 0x30 /opt/ lead and trail \n'
	for i in $(seq 1 300); do printf 'MPI_Reduce %d /usr/lib/libsolver.so\n' $((4096 + i)); done
} >"$tmp/sites.txt"
"$MAKE" "$tmp/sites.ntlog" 4 "$tmp/sites.txt" || { echo "FAIL: make-ntlog with SITES"; exit 1; }
report "$tmp/sites.ntlog" sites
grep -q '^MPI_Allreduce,"my,app ""v2"".so+0x10",' "$tmp/sites/sites.csv" ||
	{ echo "FAIL: the location with a comma and quotes is not quoted as RFC 4180 says:"
	  grep -a my,app "$tmp/sites/sites.csv"; fail=1; }

# A DIR that is a file: refused in one line before any log is read, the file unchanged.
echo keep >"$tmp/afile"
if "$NT" report "$tmp/r3.ntlog" --csv "$tmp/afile" >"$tmp/out" 2>"$tmp/err"; then
	echo "FAIL: --csv FILE was accepted"
	fail=1
fi
[ "$(wc -l <"$tmp/err")" = 1 ] || { echo "FAIL: not one line:"; cat "$tmp/err"; fail=1; }
[ ! -s "$tmp/out" ] || { echo "FAIL: a log was reported before --csv was refused"; fail=1; }
[ "$(cat "$tmp/afile")" = keep ] || { echo "FAIL: the file was changed"; fail=1; }

# A failed write (the file size limit: coverage.csv, written first, is past 4 KiB at 300 ranks,
# a row a rank) leaves the tables that were there, every one, and no temporary file.
cp -r "$tmp/r3" "$tmp/old"
"$MAKE" "$tmp/r300.ntlog" 300 || { echo "FAIL: make-ntlog 300"; exit 1; }
if (trap '' XFSZ; ulimit -f 4; exec "$NT" report "$tmp/r300.ntlog" --no-symbols \
	--csv "$tmp/old" >/dev/null 2>"$tmp/err"); then
	echo "FAIL: a write past the size limit succeeded"
	fail=1
fi
[ "$(wc -l <"$tmp/err")" = 1 ] || { echo "FAIL: not one line:"; cat "$tmp/err"; fail=1; }
diff -r "$tmp/r3" "$tmp/old" >/dev/null || { echo "FAIL: a failed write changed the tables"; fail=1; }
grep -q "coverage.csv" "$tmp/err" || { echo "FAIL: the error does not name coverage.csv:"; cat "$tmp/err"; fail=1; }
exit $fail
