#!/usr/bin/env bash
# noisetool report names a call site by a function only when the site lies inside it. A stripped
# PIE keeps only its exported symbols (.dynsym), and addr2line -f gives the nearest one before
# an address however far away: the site in names-prog's static names_site, just past its small
# exported names_tiny, was reported as names_tiny. Now: module+offset without a debug file,
# file:line with one (beside it, through .gnu_debuglink, or by its build ID under
# --debug-dir DIR), names_tiny for a site inside it.
set -u
NT=${1:?usage: test-report-names.sh NOISETOOL MAKE-NTLOG NAMES-PROG PYTHON3}
MAKE=${2:?} PROG=${3:?} PY=${4:?}
. "$(dirname "$0")/../lib.sh"
nt_tmpdir
. "$(dirname "$0")/cli-check.sh"

command -v addr2line >/dev/null || nt_skip "no addr2line (binutils)"
for t in nm strip objcopy; do
	command -v $t >/dev/null || nt_skip "no $t (binutils)"
done

# The layout the test rests on: names_tiny (exported) ends before names_site (static) begins,
# and nothing exported lies between them.
sym() { nm -S --defined-only "$PROG" | awk -v n="$1" '$4 == n { print $1, $2 }'; }
read -r tiny tiny_size <<<"$(sym names_tiny)"
read -r site site_size <<<"$(sym names_site)"
[ -n "${tiny:-}" ] && [ -n "${site:-}" ] || { fail "no names_tiny or names_site in $PROG"; summary; exit 1; }
tiny=$((16#$tiny)) tiny_size=$((16#$tiny_size)) site=$((16#$site)) site_size=$((16#$site_size))
addr=$((site + site_size / 2))         # a call site in the middle of names_site
inside=$((tiny + tiny_size - 1))       # and one inside names_tiny
[ $((tiny + tiny_size)) -le $addr ] || fail "names_tiny does not end before the site"
while read -r a _ n; do
	[ $((16#$a)) -gt $tiny ] && [ $((16#$a)) -le $addr ] && fail "$n is exported between names_tiny and the site"
done < <(nm -D --defined-only "$PROG")

# The copies: stripped (.dynsym alone), and stripped with its debug file beside it.
mkdir "$tmp/plain" "$tmp/linked"
strip -o "$tmp/plain/names-stripped" "$PROG" &&
	objcopy --only-keep-debug "$PROG" "$tmp/linked/names-prog.debug" &&
	strip -o "$tmp/linked/names-linked" "$PROG" &&
	objcopy --add-gnu-debuglink="$tmp/linked/names-prog.debug" "$tmp/linked/names-linked" ||
	{ fail "stripping $PROG"; summary; exit 1; }
nm "$tmp/plain/names-stripped" 2>&1 | grep -q names_site && fail "names_site still in the stripped copy"
addr2line -f -e "$tmp/plain/names-stripped" $(printf '0x%x' $addr) | head -1 | grep -qx names_tiny ||
	echo "note: addr2line does not name the site names_tiny here (the case the test is about)"

# name MODULE OFFSET [OPTION...]: the report's name of one MPI_Allreduce site at OFFSET in
# MODULE (a PIE: the offset is the file address).
name() {
	printf 'MPI_Allreduce 0x%x %s\n' "$2" "$1" >"$tmp/sites"
	local opts=("${@:3}")
	"$MAKE" "$tmp/n.ntlog.tmp" 2 "$tmp/sites" >/dev/null && mv "$tmp/n.ntlog.tmp" "$tmp/n.ntlog" ||
		{ echo "(no log)"; return; }
	timeout -k 5 60 "$NT" report "$tmp/n.ntlog" --top 0 --late 0 --json "$tmp/n.json" "${opts[@]}" \
		>/dev/null 2>"$tmp/n.err" || { echo "(report failed: $(head -c 200 "$tmp/n.err"))"; rm -f "$tmp/n.ntlog"; return; }
	rm -f "$tmp/n.ntlog"
	"$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["sites"][0]["location"])' "$tmp/n.json"
}

# expect WHAT GOT WANT (a shell pattern)
expect() {
	# shellcheck disable=SC2053
	if [[ $2 == $3 ]]; then ok; echo "$1: $2"; else fail "$1: '$2', want '$3'"; fi
}

src=names-prog.c
expect "unstripped, the site" "$(name "$PROG" $addr)" "$src:[1-9]*"
expect "stripped, the site past names_tiny" "$(name "$tmp/plain/names-stripped" $addr)" \
	"$(printf 'names-stripped+0x%x' $addr)"
expect "stripped, a site inside names_tiny" "$(name "$tmp/plain/names-stripped" $inside)" \
	"$(printf 'names_tiny+0x%x' $((inside - tiny)))"
expect "stripped, its .gnu_debuglink file beside it" "$(name "$tmp/linked/names-linked" $addr)" \
	"$src:[1-9]*"

# A debug directory given with --debug-dir, laid out as /usr/lib/debug by Debian's -dbgsym
# packages: the stripped copy (no .gnu_debuglink) finds its debug file by its build ID.
id=$(readelf -n "$PROG" | awk '/Build ID:/ { print $3 }')
if [ -z "$id" ]; then
	echo "note: $PROG has no build ID (linker without --build-id): --debug-dir not checked"
else
	mkdir -p "$tmp/debug/.build-id/${id:0:2}"
	cp "$tmp/linked/names-prog.debug" "$tmp/debug/.build-id/${id:0:2}/${id:2}.debug"
	expect "stripped, --debug-dir with its build ID's file" \
		"$(name "$tmp/plain/names-stripped" $addr --debug-dir "$tmp/debug")" "$src:[1-9]*"
	expect "stripped, --debug-dir without its file" \
		"$(name "$tmp/plain/names-stripped" $addr --debug-dir "$tmp/linked")" \
		"$(printf 'names-stripped+0x%x' $addr)"
	# A debug file of another build under the module's build ID is not taken.
	mkdir -p "$tmp/other/.build-id/${id:0:2}"
	objcopy --only-keep-debug "$MAKE" "$tmp/other/.build-id/${id:0:2}/${id:2}.debug"
	expect "stripped, --debug-dir with another build's file" \
		"$(name "$tmp/plain/names-stripped" $addr --debug-dir "$tmp/other")" \
		"$(printf 'names-stripped+0x%x' $addr)"
	# A FIFO in its place is not opened (the report would wait for a writer).
	mkdir -p "$tmp/fifo/.build-id/${id:0:2}"
	mkfifo "$tmp/fifo/.build-id/${id:0:2}/${id:2}.debug"
	expect "stripped, --debug-dir with a FIFO as its file" \
		"$(name "$tmp/plain/names-stripped" $addr --debug-dir "$tmp/fifo")" \
		"$(printf 'names-stripped+0x%x' $addr)"
fi
# A --debug-dir that is not a directory is refused before the report (status 2, one line).
printf 'MPI_Allreduce 0x%x %s\n' $addr "$PROG" >"$tmp/sites"
"$MAKE" "$tmp/d.ntlog" 2 "$tmp/sites" >/dev/null || fail "making the log"
expect_status 2 "$NT" report "$tmp/d.ntlog" --debug-dir "$tmp/missing"
grep -q "debug-dir '$tmp/missing' is not a directory" "$tmp/err" && ok || fail "--debug-dir missing: $(cat "$tmp/err")"
expect_status 2 "$NT" report "$tmp/d.ntlog" --debug-dir "$tmp/sites"

summary
