# Sourced by the command-line contract tests: pass/fail counting, the check of a refused
# command line, the summary. The sourcing script sets $tmp (a scratch directory).
fails=0
pass=0

ok()   { pass=$((pass + 1)); }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# expect_status RC CMD...: CMD exits RC, writes exactly one line on stderr, nothing on stdout.
expect_status() {
	local want=$1
	shift
	"$@" >"$tmp/out" 2>"$tmp/err"
	local rc=$? lines
	lines=$(wc -l <"$tmp/err")
	if [ $rc -ne "$want" ]; then fail "'$*' exited $rc, want $want"; cat "$tmp/err"; return; fi
	if [ "$lines" -ne 1 ]; then fail "'$*' wrote $lines lines to stderr, want 1"; cat "$tmp/err"; return; fi
	if [ -s "$tmp/out" ]; then fail "'$*' wrote to stdout"; return; fi
	ok
}

# The counts; the status of the test.
summary() {
	echo "$pass passed, $fails failed"
	[ $fails -eq 0 ]
}
