#!/usr/bin/env bash
# One command for everything on a fresh Debian/Ubuntu machine:
#   ./setup.sh demo   install what is missing, build, run a small MPI job next to a CPU hog and
#                     print which rank made its collectives late, and why
#   ./setup.sh test   install what is missing, build, run the whole test suite
#   ./setup.sh build  install what is missing and build only
# Idempotent: packages already there are not reinstalled, an existing build is reused.
set -euo pipefail
cd "$(dirname "$0")"

BUILD_DIR=${BUILD_DIR:-build}
PACKAGES=(gcc g++ gfortran pkg-config meson ninja-build mpich libmpich-dev libpapi-dev
          libunwind-dev catch2 zlib1g-dev binutils bc)

usage() {
	sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'
}

missing_packages() {
	local p missing=()
	for p in "${PACKAGES[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
			missing+=("$p")
	done
	echo "${missing[@]:-}"
}

install_deps() {
	if ! command -v dpkg-query >/dev/null; then
		echo "setup.sh: not a Debian/Ubuntu system; install by hand: ${PACKAGES[*]}" >&2
		command -v meson >/dev/null && command -v ninja >/dev/null && return 0
		exit 1
	fi
	local missing
	missing=$(missing_packages)
	[ -z "$missing" ] && return 0
	if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
		echo "setup.sh: missing packages; run as root:" >&2
		echo "  apt-get update && apt-get install -y --no-install-recommends $missing" >&2
		exit 1
	fi
	echo "setup.sh: installing $missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q >/dev/null
	# shellcheck disable=SC2086
	apt-get install -y -q --no-install-recommends $missing >/dev/null
}

build() {
	if [ ! -f "$BUILD_DIR/build.ninja" ]; then
		meson setup "$BUILD_DIR" --werror -Dbuildtype=debugoptimized
	fi
	meson compile -C "$BUILD_DIR"
}

run_tests() {
	local log rc=0
	log=$(mktemp)
	meson test -C "$BUILD_DIR" --print-errorlogs --num-processes 2 | tee "$log" || rc=$?
	# A closing line any CI understands.
	local ok fail skip
	ok=$(awk '/^Ok:/ {print $2}' "$log")
	fail=$(awk '/^Fail:/ {print $2}' "$log")
	skip=$(awk '/^Skipped:/ {print $2}' "$log")
	to=$(awk '/^Timeout:/ {print $2}' "$log")
	rm -f "$log"
	echo "tests: ${ok:-0} passed, $(( ${fail:-0} + ${to:-0} )) failed, ${skip:-0} skipped"
	return $rc
}

# The main job: a small MPI job (Jones et al.'s 4096 8-byte allreduces, 20 us of work between
# calls) on 2 ranks, one per core, with a CPU hog on rank 1's core for the job's length;
# noisetool run prints the report: which rank made the collectives late, and why.
demo() {
	local nt="$BUILD_DIR/tools/noisetool" prog="$BUILD_DIR/examples/allreduce-loop"
	if [ ! -x "$prog" ] || ! command -v mpiexec >/dev/null; then
		echo "setup.sh: the demo needs MPICH (mpiexec) and the examples built" >&2
		return 1
	fi
	# Where -bind-to core puts rank 1 (the hog must share its CPU).
	local cpu
	cpu=$(mpiexec -n 2 -bind-to core sh -c 'echo "$PMI_RANK $(taskset -pc $$ | sed "s/.*: //")"' |
		awk '$1 == 1 { print $2 }')
	if [ -z "$cpu" ]; then
		echo "setup.sh: the demo needs 2 CPUs (mpiexec -n 2 -bind-to core)" >&2
		return 1
	fi
	echo "== noisetool run: 2 ranks, 4096 x 8-byte MPI_Allreduce with 20 us of work between"
	echo "   calls, and a CPU hog on rank 1's CPU ($cpu) for the job's length"
	echo
	taskset -c "$cpu" sh -c 'while :; do :; done' &
	hog=$!
	trap 'kill "$hog" 2>/dev/null' EXIT
	local rc=0
	"$nt" run --out "$BUILD_DIR/demo-logs" --top 5 --late 10 -- \
		mpiexec -n 2 -bind-to core "$prog" --compute-us 20 --outliers 5 || rc=$?
	return $rc
}

case "${1:-}" in
demo)
	install_deps
	build >/dev/null
	demo
	;;
test)
	install_deps
	build
	run_tests
	;;
build)
	install_deps
	build
	;;
-h | --help | help)
	usage
	;;
*)
	usage >&2
	exit 2
	;;
esac
