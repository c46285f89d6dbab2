#!/usr/bin/env bash
# One command for everything on a fresh Debian/Ubuntu machine:
#   ./setup.sh demo   install what is missing, build, measure this node's noise signature
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

case "${1:-}" in
demo)
	install_deps
	build >/dev/null
	echo "== noisetool detour: this node's noise signature, 5 s on every CPU at once"
	"$BUILD_DIR/tools/noisetool" detour --seconds 5 --cpu all
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
