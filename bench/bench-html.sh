#!/usr/bin/env bash
# The report page at scale: made-up logs of realistic shape (tests/integration/make-ntlog
# OUT NRANKS --records N: eight call sites, three noisy ranks, 16 ranks a host), each reported
# with --html; a table of the log's size, the page's data (JSON) and the page, the time to
# report and draw, and the page's load time in headless chromium (tests/html/check-page.py).
#
#   bench-html.sh NOISETOOL MAKE_NTLOG CHECK_PAGE [RANKSxRECORDS...]
#
# Default sizes 2x1000 64x100000 256x1000000 (BENCH_HTML_SIZES overrides them too). Python:
# NOISETOOL_PYTHON, else /usr/bin/python3.
set -u
NT=${1:?usage: bench-html.sh NOISETOOL MAKE_NTLOG CHECK_PAGE [RANKSxRECORDS...]}
MAKE=${2:?}
CHECK=${3:?}
shift 3
sizes=${*:-${BENCH_HTML_SIZES:-2x1000 64x100000 256x1000000}}
PY=${NOISETOOL_PYTHON:-/usr/bin/python3}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# The plotting helper's Python, with its stdin (the page's JSON) copied to $tmp/page.json.
cat >"$tmp/tee-python" <<EOF
#!/bin/sh
tee "$tmp/page.json" | exec "$PY" "\$@"
EOF
chmod +x "$tmp/tee-python"

mb() { awk -v b="$(stat -c %s "$1")" 'BEGIN { printf "%.2f", b / 1e6 }'; }

printf "%6s %9s %8s %9s %8s %14s %7s\n" ranks records "log MB" "JSON MB" "page MB" \
	"report+draw s" "load s"
for size in $sizes; do
	ranks=${size%x*} records=${size#*x}
	log="$tmp/log-$size.ntlog"
	"$MAKE" "$log" "$ranks" --records "$records" || { echo "make-ntlog $size failed"; exit 1; }
	start=$(date +%s.%N)
	NOISETOOL_PYTHON="$tmp/tee-python" "$NT" report "$log" --no-symbols \
		--html "$tmp/page.html" >/dev/null 2>"$tmp/err" ||
		{ echo "report --html $size failed:"; cat "$tmp/err"; exit 1; }
	end=$(date +%s.%N)
	"$PY" "$CHECK" "$tmp/page.html" --json "$tmp/check.json" >"$tmp/check.out"
	rc=$?
	if [ $rc = 0 ]; then
		load=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["load_s"])' \
			"$tmp/check.json")
	else
		load="n/a"
		[ $rc = 77 ] || { echo "check-page $size failed:"; cat "$tmp/check.out"; }
	fi
	printf "%6s %9s %8s %9s %8s %14.2f %7s\n" "$ranks" "$records" "$(mb "$log")" \
		"$(mb "$tmp/page.json")" "$(mb "$tmp/page.html")" \
		"$(awk -v s="$start" -v e="$end" 'BEGIN { print e - s }')" "$load"
	rm -f "$log"
done
