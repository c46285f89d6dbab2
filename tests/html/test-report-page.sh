#!/usr/bin/env bash
# The report page (noisetool report LOG --html FILE) in headless chromium: no console error,
# every chart drawn, and the page shows what the report's own JSON of the same log says: the
# number of ranks, whether it is partial, the top culprit rank, its largest cause and that
# cause's share (as the text report prints it, same rounding). Ground truth is the tool's JSON,
# never how quiet the machine was.
#
#   test-report-page.sh logs  NOISETOOL CHECK_PAGE MAKE_NTLOG   made-up logs (small, partial)
#   test-report-page.sh scale NOISETOOL CHECK_PAGE MAKE_NTLOG   64 ranks, 10^5 records: the
#                                                               page < 10 MB, loads in < 5 s
#   test-report-page.sh job   NOISETOOL CHECK_PAGE PROGRAM      a real 2-rank job, 5 ms detours
#                                                               injected on rank 1 (tests/mpi)
set -u
MODE=${1:?usage: test-report-page.sh logs|scale|job NOISETOOL CHECK_PAGE MAKE_NTLOG|PROGRAM}
NT=${2:?}
CHECK=${3:?}
ARG=${4:?}
. "$(dirname "$0")/../lib.sh"
nt_tmpdir
nt_need_plot
fail=0

# expect NAME JSON PAGE: the facts the page must show, from the report JSON, as
# "--expect CSS TEXT" arguments for check-page.py, one per line pair, into $tmp/NAME.expect;
# and the same facts compared exactly with the page's data-key elements (the browser check
# looks for the text inside an element: "1" is in "10").
expect() {
	"$NT_PYTHON" - "$2" "$3" "$tmp/$1.expect" <<'EOF'
import html.parser, json, sys
rep = json.load(open(sys.argv[1]))
# The page's words for the causes, in the report's order of causes (its own list, NT_CAUSES).
NAMES = {c["key"]: c["words"] for c in rep["causes"]}
want = {"ranks": str(rep["ranks"])}
want["partial"] = "yes" if rep["partial"] else "no (complete)"
c = rep["culprits"]
if c and c[0]["delay_ns"]:
    causes = c[0]["causes"]
    top = max(NAMES, key=lambda k: (causes[k + "_ns"], -list(NAMES).index(k)))
    want["top-culprit-rank"] = str(c[0]["rank"])
    want["top-culprit-cause"] = NAMES[top]
    # As the text report prints it: 100.0 * ns / delay, one decimal.
    share = 100.0 * float(causes[top + "_ns"]) / float(c[0]["delay_ns"])
    want["top-culprit-share"] = f"{share:.1f} %"
class P(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.key, self.got = None, {}
    def handle_starttag(self, tag, attrs):
        self.key = dict(attrs).get("data-key") if tag == "dd" else None
    def handle_endtag(self, tag):
        self.key = None
    def handle_data(self, data):
        if self.key:
            self.got[self.key] = self.got.get(self.key, "") + data
p = P()
p.feed(open(sys.argv[2], encoding="utf-8").read())
bad = 0
for k, v in want.items():
    got = p.got.get(k)
    ok = got is not None and (got.startswith("yes: ") or got == "yes" if v == "yes" else got == v)
    if not ok:
        print(f"FAIL: {sys.argv[2]}: [data-key={k}] is {got!r}, the report JSON says {v!r}")
        bad = 1
with open(sys.argv[3], "w") as f:
    for k, v in want.items():
        print(f"[data-key={k}]\n{v}", file=f)
print("expect:", ", ".join(f"{k}={v}" for k, v in want.items()))
sys.exit(bad)
EOF
}

# page NAME LOG CHARTS [check-page options]: report LOG as JSON and HTML, then the checks.
page() {
	local name=$1 log=$2 charts=$3
	shift 3
	"$NT" report "$log" --no-symbols --json "$tmp/$name.json" --html "$tmp/$name.html" \
		>"$tmp/$name.txt" 2>"$tmp/$name.err" ||
		{ echo "FAIL: $name: noisetool report --html failed:"; cat "$tmp/$name.err"; fail=1; return 1; }
	expect "$name" "$tmp/$name.json" "$tmp/$name.html" || fail=1
	local args=() k v
	while IFS= read -r k && IFS= read -r v; do
		args+=(--expect "$k" "$v")
	done <"$tmp/$name.expect"
	"$NT_PYTHON" "$CHECK" "$tmp/$name.html" --charts "$charts" "${args[@]}" "$@" \
		--json "$tmp/$name.check.json"
	local rc=$?
	[ $rc = 77 ] && exit 77
	[ $rc = 0 ] || fail=1
	# The text report says the same share for that rank.
	"$NT_PYTHON" - "$tmp/$name.json" "$tmp/$name.txt" <<'EOF' || fail=1
import json, sys
rep = json.load(open(sys.argv[1]))
c = rep["culprits"]
if not c:
    sys.exit(0)
text = open(sys.argv[2]).read().split("Culprits by rank")[1].splitlines()
row = next(l for l in text if l.startswith(f"{c[0]['rank']} ("))
keys = [k["key"] for k in rep["causes"]]
from_text = row.split()[-len(keys):]
mine = [f"{100.0 * float(c[0]['causes'][k + '_ns']) / float(c[0]['delay_ns']):.1f}" for k in keys]
if from_text != mine:
    print(f"FAIL: the text report's shares {from_text} differ from the JSON's {mine}")
    sys.exit(1)
EOF
}

case "$MODE" in
logs)
	MAKE=$ARG
	# The small log of the report tests: 2 ranks, 1 late instance (rank 1, preempted).
	"$MAKE" "$tmp/small.ntlog" 2 || exit 1
	page small "$tmp/small.ntlog" 6 --expect '#culprit-table' '' --expect '#latest-table' 'world:2'
	# A realistic one: 8 ranks, 3 noisy (preempted, injected, faulting).
	"$MAKE" "$tmp/shaped.ntlog" 8 --records 8000 --seed 3 || exit 1
	page shaped "$tmp/shaped.ntlog" 6 --expect '#site-table' 'MPI_Alltoall' \
		--expect '#culprit-table' 'node-000' \
		--screenshot "$tmp/shaped.png"
	# A partial log: the warning is shown, with the report's own reason.
	"$MAKE" "$tmp/partial.ntlog" 4 --records 400 --dropped 7 || exit 1
	page partial "$tmp/partial.ntlog" 6 --expect 'p.warning' 'PARTIAL: 7 records'
	grep -q "7 records" "$tmp/partial.txt" ||
		{ echo "FAIL: the text report does not name the 7 dropped records"; fail=1; }
	# A log with no late instance at all: facts and call sites, no empty chart.
	"$MAKE" "$tmp/quiet.ntlog" 1 || exit 1
	page quiet "$tmp/quiet.ntlog" 2 --expect '[data-key=top-culprit-rank]' 'none'
	;;
scale)
	MAKE=$ARG
	"$MAKE" "$tmp/big.ntlog" 64 --records 100000 || exit 1
	start=$(date +%s.%N)
	page big "$tmp/big.ntlog" 6 --max-load-s 5
	end=$(date +%s.%N)
	bytes=$(stat -c %s "$tmp/big.html")
	awk -v b="$bytes" -v s="$start" -v e="$end" \
		'BEGIN { printf "64 ranks, 10^5 records: page %.2f MB, report + draw + check %.1f s\n", b / 1e6, e - s }'
	[ "$bytes" -lt 10000000 ] || { echo "FAIL: the page is $bytes bytes (limit 10 MB)"; fail=1; }
	;;
job)
	PROG=$ARG
	nt_need_mpiexec
	# 5 ms detours every 25 ms on rank 1 (as tests/mpi/test-attribution.sh), 2000 x 100 us.
	timeout 300 "$NT" run --out "$tmp/out" --inject period=25ms,detour=5ms,mode=unsync,ranks=1,seed=1 \
		-- mpiexec -n 2 $(nt_bind 2) "$PROG" 2000 100 >"$tmp/run.out" 2>&1 ||
		{ echo "FAIL: the job failed"; cat "$tmp/run.out"; exit 1; }
	log=$(ls "$tmp"/out/*.ntlog | head -1)
	[ -n "$log" ] || { echo "FAIL: no log"; exit 1; }
	# Charts: culprits by rank and node, heat map, latest, histograms, costs (when anything
	# was late: the detours make it so on any machine, and the JSON decides what to expect).
	late=$("$NT_PYTHON" -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["late_instances"]))' \
		<("$NT" report "$log" --no-symbols --json -))
	page job "$log" $([ "$late" -gt 0 ] && echo 6 || echo 2) --screenshot "$tmp/job.png"
	;;
*)
	echo "usage: test-report-page.sh logs|scale|job ..."
	exit 2
	;;
esac
exit $fail
