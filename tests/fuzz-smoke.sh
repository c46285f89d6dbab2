#!/usr/bin/env bash
# The fuzz smoke run (suite fuzz): builds fuzz/'s libFuzzer harnesses with clang, ASan and UBSan
# in their own build directory (configured once, then rebuilt incrementally), replays every
# committed seed and regression input in fuzz/corpus/, and fuzzes each harness for a few
# seconds. Any crash, hang, leak or sanitizer report fails the test, naming the input it saved.
#
#   fuzz-smoke.sh SOURCE-DIR FUZZ-BUILD-DIR MESON CLANG [SECONDS]   (default 5 s per harness)
set -uo pipefail
src=${1:?usage: fuzz-smoke.sh SOURCE-DIR FUZZ-BUILD-DIR MESON CLANG [SECONDS]}
dir=${2:?} meson=${3:?} clang=${4:?} seconds=${5:-${NT_FUZZ_SECONDS:-5}}
harnesses=(ntlog signature)

log=$dir-setup.log
if [ ! -f "$dir/build.ninja" ]; then
	# The harnesses need the core alone: no MPI, PAPI, libunwind, tests or examples.
	if ! CC=$clang "$meson" setup "$dir" "$src" --wrap-mode=nodownload \
		-Dbuildtype=debugoptimized -Dfuzzers=true -Dfuzz_smoke=disabled \
		-Dtests=disabled -Dwrappers=disabled -Dpapi=disabled -Dlibunwind=disabled \
		-Dexamples=false -Db_sanitize=address,undefined -Db_lundef=false \
		-Dc_args=-fno-sanitize-recover=all >"$log" 2>&1; then
		tail -n 20 "$log"
		echo "fuzz-smoke: configuring the clang build in $dir failed (above; $log)" >&2
		rm -rf "$dir"
		exit 1
	fi
fi
targets=()
for h in "${harnesses[@]}"; do targets+=("fuzz/fuzz-$h"); done
if ! "$meson" compile -C "$dir" "${targets[@]}" >"$dir-compile.log" 2>&1; then
	tail -n 30 "$dir-compile.log"
	echo "fuzz-smoke: building the harnesses failed (above)" >&2
	exit 1
fi

status=0
for h in "${harnesses[@]}"; do
	work=$dir/smoke/$h
	rm -rf "$work" && mkdir -p "$work/new" "$work/artifacts"
	# New inputs go to a scratch directory, never into the committed corpus.
	"$dir/fuzz/fuzz-$h" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$work/artifacts/" \
		"$work/new" "$src/fuzz/corpus/$h" >"$work/log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log")
	cov=$(grep -E '^#[0-9]+' "$work/log" | tail -n 1 | grep -oE 'cov: [0-9]+ ft: [0-9]+')
	if [ $rc -ne 0 ]; then
		grep -vE '^#[0-9]+|^INFO:' "$work/log" | tail -n 60
		echo "fuzz-smoke: fuzz-$h failed (exit $rc); the input: $(ls "$work/artifacts")" >&2
		status=1
	else
		echo "fuzz-$h: ${runs:-?} runs in $seconds s, ${cov:-no coverage line}, no crash"
	fi
done
exit $status
