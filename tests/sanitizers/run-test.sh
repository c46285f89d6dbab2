#!/usr/bin/env bash
# The asan and tsan test setups' exe_wrapper: runs one test with every sanitizer report of every
# process it starts written to a scratch directory, and fails the test when any report is there,
# even one from a process whose exit status the test expected to be an error, or ignored.
set -u
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"; exit 143' TERM INT # meson's timeout
for v in ASAN_OPTIONS LSAN_OPTIONS UBSAN_OPTIONS TSAN_OPTIONS; do
	export "$v=${!v:+${!v}:}log_path=$dir/report"
done
"$@"
rc=$?
reports=("$dir"/report.*)
if [ -e "${reports[0]}" ]; then
	echo "SANITIZER: ${#reports[@]} report(s) (test exit status $rc):" >&2
	for r in "${reports[@]}"; do
		echo "== ${r##*/}" >&2
		cat "$r" >&2
	done
	rc=1
fi
rm -rf "$dir"
exit $rc
