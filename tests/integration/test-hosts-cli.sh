#!/usr/bin/env bash
# noisetool hosts from the command line (the fleet view, issue 36): made-up logs in a site's
# date-laid directory and one that is not a log; the text, the JSON and the page agree on the
# jobs read and the log left out; bad command lines and bad outputs fail at once with one line
# and leave nothing (an input is never an output; a page without matplotlib is refused before
# any log is read).
set -u
NT=${1:?usage: test-hosts-cli.sh NOISETOOL MAKE-NTLOG}
MAKE=${2:?}
. "$(dirname "$0")/../lib.sh"
nt_tmpdir
. "$(dirname "$0")/cli-check.sh"

site=$tmp/site
mkdir -p "$site/2026/12/01" "$site/2026/12/02"
"$MAKE" "$site/2026/12/01/a.ntlog" 2 && "$MAKE" "$site/2026/12/02/b.ntlog" 3 ||
	{ fail "make-ntlog"; summary; exit 1; }
echo "not a log" >"$site/2026/12/02/c.ntlog"

# The view: 2 jobs read, the third left out; the JSON says the same.
if "$NT" hosts "$site" --json "$tmp/v.json" >"$tmp/v.txt" 2>"$tmp/v.err" &&
	grep -q ": 2 jobs, 5 ranks, 1 hosts" "$tmp/v.txt" && grep -q "c.ntlog: " "$tmp/v.txt" &&
	python3 - "$tmp/v.json" <<'PY'; then
import json, sys
d = json.load(open(sys.argv[1]))
assert d["jobs"] == 2 and d["ranks"] == 5, d
assert [u["log"].rsplit("/", 1)[1] for u in d["unreadable"]] == ["c.ntlog"], d["unreadable"]
assert [c["key"] for c in d["causes"]][0] == "preemption", d["causes"]
assert d["hosts"][0]["worst_jobs"][0]["batch_job"] == "77.0", d["hosts"][0]
PY
	ok
else
	fail "noisetool hosts $site"
	cat "$tmp/v.err" "$tmp/v.txt"
fi

# Bad command lines: status 2, one line.
expect_status 2 "$NT" hosts
expect_status 2 "$NT" hosts "$site" --top
expect_status 2 "$NT" hosts "$site" --bogus
# Bad inputs and outputs: status 1, one line, nothing written.
expect_status 1 "$NT" hosts "$tmp/missing"
# No log read: status 1, saying so, then why for each.
"$NT" hosts "$site/2026/12/02/c.ntlog" >"$tmp/out" 2>"$tmp/err"
[ $? = 1 ] && [ ! -s "$tmp/out" ] && grep -q "no log could be read (1 found)" "$tmp/err" &&
	grep -q "c.ntlog: not a noisetool log" "$tmp/err" && ok ||
	{ fail "a directory of no log"; cat "$tmp/err"; }
cp "$site/2026/12/01/a.ntlog" "$tmp/a-copy.ntlog"
expect_status 1 "$NT" hosts "$site/2026/12/01/a.ntlog" --json "$site/2026/12/01/a.ntlog"
cmp -s "$site/2026/12/01/a.ntlog" "$tmp/a-copy.ntlog" || fail "--json over its input changed it"
expect_status 1 "$NT" hosts "$site" --html "$tmp/no/such/dir/p.html"
NOISETOOL_PYTHON=/bin/false expect_status 1 "$NT" hosts "$site" --html "$tmp/p.html"
[ -e "$tmp/p.html" ] && fail "--html without a Python that draws left $tmp/p.html"

# The page, where a Python that draws is here.
if "$NT" hosts "$site" --html "$tmp/page.html" >/dev/null 2>"$tmp/page.err"; then
	for want in 'data-key="jobs">2<' 'id="hosts-table"' 'id="unreadable-table"' \
		"slurm 77.0, alice" 'id="worst-sites-table"'; do
		grep -qF "$want" "$tmp/page.html" || fail "the page lacks $want"
	done
	ok
elif grep -q "matplotlib" "$tmp/page.err"; then
	echo "(no Python with matplotlib here: the page was not drawn)"
else
	fail "noisetool hosts --html"
	cat "$tmp/page.err"
fi
summary
