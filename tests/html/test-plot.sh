#!/usr/bin/env bash
# The plotting helper and the browser check: the self-test page (facts, a sortable table, an
# SVG and a PNG figure) opens in headless chromium with every chart drawn, its numbers on it, no
# console error and nothing fetched from outside. And --html's contract: without matplotlib it
# fails in one line naming what to install and leaves nothing; an input is never the output; a
# missing directory is refused before the work.
#
#   test-plot.sh NOISETOOL CHECK_PAGE
set -u
NT=${1:?usage: test-plot.sh NOISETOOL CHECK_PAGE}
CHECK=${2:?}
. "$(dirname "$0")/../lib.sh"
nt_tmpdir
fail=0
nt_need_plot

echo '{"ranks": 3, "name": "self"}' >"$tmp/doc.json"
# The self-test page (a kind noisetool plot does not offer), straight from the helper.
PYTHONPATH="$NT_PLOT_DIR" "$NT_PYTHON" -m noisetool_plot selftest <"$tmp/doc.json" >"$tmp/self.html" ||
	{ echo "FAIL: the helper did not draw the self-test page"; fail=1; }
"$NT_PYTHON" "$CHECK" "$tmp/self.html" --charts 2 --expect '[data-key=ranks]' 3 \
	--expect '#t' '2.0 ms' --max-load-s 5
rc=$?
[ $rc = 77 ] && exit 77
[ $rc = 0 ] || fail=1

# Without matplotlib: one line, exit 1, no file.
if NOISETOOL_PYTHON=/bin/false "$NT" plot detour "$tmp/doc.json" --html "$tmp/none.html" 2>"$tmp/err"; then
	echo "FAIL: --html without a working Python succeeded"
	fail=1
fi
grep -q "apt install python3-matplotlib" "$tmp/err" ||
	{ echo "FAIL: --html without matplotlib does not say what to install:"; cat "$tmp/err"; fail=1; }
[ ! -e "$tmp/none.html" ] || { echo "FAIL: --html without matplotlib left a file"; fail=1; }
# An input is never the output; a missing directory is refused before the work.
"$NT" plot detour "$tmp/doc.json" --html "$tmp/doc.json" 2>"$tmp/err" && { echo "FAIL: input as output"; fail=1; }
cmp -s "$tmp/doc.json" <(echo '{"ranks": 3, "name": "self"}') ||
	{ echo "FAIL: the input was changed"; fail=1; }
"$NT" plot detour "$tmp/doc.json" --html "$tmp/no/such/dir/p.html" 2>"$tmp/err" &&
	{ echo "FAIL: a missing directory was accepted"; fail=1; }
exit $fail
