#!/usr/bin/env bash
# The screenshots in doc/screenshots/: every --html page drawn from real runs on this machine
# (a 2-rank allreduce-loop with and without noise injected on rank 1, detour, ftq, simulate,
# coll-noise, udp-pingpong), opened in headless chromium by tests/html/check-page.py, which
# also checks each page (no console error, every chart drawn) before it saves the picture.
#
#   doc/screenshots/make-screenshots.sh [BUILD_DIR]      (default: build)
#
# Needs the build with MPICH and the examples, python3-matplotlib, chromium, chromium-driver and
# python3-selenium (./setup.sh installs them). Takes about a minute.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
out=$root/doc/screenshots
NT=$build/tools/noisetool
PY=/usr/bin/python3
CHECK="$PY $root/tests/html/check-page.py"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
shot() { # PAGE NAME: check the page and save its picture (the top 4000 px, 1100 px wide)
	$CHECK "$1" --width 1100 --max-height 4000 --screenshot "$out/$2.png"
}
cd "$tmp"

# The report page: 5 ms detours every 25 ms injected on rank 1 of a 2-rank allreduce loop.
# The comparison page: the same program without the noise (A) and with it (B).
loop=$build/examples/allreduce-loop
for run in quiet noisy; do
	inject=()
	[ $run = noisy ] && inject=(--inject period=25ms,detour=5ms,mode=unsync,ranks=1,seed=1)
	"$NT" run --out "$run" "${inject[@]}" -- mpiexec.mpich -n 2 -bind-to core "$loop" \
		--calls 4096 --compute-us 100 >/dev/null
done
"$NT" report noisy/*.ntlog --html report.html >/dev/null
shot report.html report
"$NT" report quiet/*.ntlog noisy/*.ntlog --html compare.html >/dev/null
shot compare.html compare

# A node's noise, both ways; and what noise of 1 kHz x 25 us does at scale.
"$NT" detour --seconds 2 --cpu all --html detour.html >/dev/null
shot detour.html detour
"$NT" ftq --seconds 2 --cpu all --html ftq.html >/dev/null
shot ftq.html ftq
"$NT" simulate --ranks 2^4-2^20 --collective allreduce --noise freq=1kHz,length=25us \
	--sync-unsync --html simulate.html >/dev/null
shot simulate.html simulate

# The examples' matrices.
mpiexec.mpich -n 2 -bind-to core "$build/examples/coll-noise" --seconds 0.2 --json coll.json >/dev/null
"$NT" plot coll-noise coll.json --html coll-noise.html
shot coll-noise.html coll-noise
"$build/examples/udp-pingpong" matrix --seconds 0.2 --warmup-s 0.05 --sizes 4,1024 \
	--loads none,100 --repeat 1 --work-us 50 --json udp.json >/dev/null
"$NT" plot udp-pingpong udp.json --html udp-pingpong.html
shot udp-pingpong.html udp-pingpong
ls -la "$out"/*.png
