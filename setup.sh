#!/usr/bin/env bash
# One command for everything on a fresh Debian/Ubuntu machine:
#   ./setup.sh demo   install what is missing, build, run a small MPI job next to a CPU hog and
#                     print which rank made its collectives late, and why
#   ./setup.sh test   install what is missing, build, run the whole test suite
#   ./setup.sh build  install what is missing and build only
#   ./setup.sh sanitize  the suites under ASan+UBSan and the threaded MPI tests under TSan
#                     (separate build directories; see doc/testing.md)
# Idempotent: packages already there are not reinstalled, an existing build is reused. Every
# feature is required (a missing dependency is an error naming its package, never a smaller
# suite), and a test run that executed fewer tests than the suite defines fails.
set -euo pipefail
cd "$(dirname "$0")"

BUILD_DIR=${BUILD_DIR:-build}
# Both MPIs, side by side (the `mpi` alternatives then point at one of them: the build and the
# tests name mpicc.mpich, mpiexec.openmpi, ... explicitly); mpi4py (built on Open MPI) and
# CPython's headers (python3-dev) for the Python call sites; matplotlib draws the --html pages,
# which the tests open in a headless chromium through selenium (doc/html.md); valgrind's
# callgrind counts the fast path's instructions (tests/mpi/test-insn.sh); Slurm's daemons and
# munge run a private Slurm for tests/slurm (started by the test, nothing under /etc), whose
# spank.h (libslurm-dev) builds the SPANK plugin; iproute2
# makes the namespace hosts of tests/hosts.
PACKAGES=(gcc g++ gfortran pkg-config meson ninja-build mpich libmpich-dev openmpi-bin
          libopenmpi-dev python3-mpi4py python3-dev libpapi-dev libunwind-dev catch2 zlib1g-dev
          binutils bc clang-14 libclang-rt-14-dev python3-matplotlib fonts-dejavu-core chromium
          chromium-driver python3-selenium valgrind slurmd slurmctld slurm-client munge
          libslurm-dev iproute2)

usage() {
	sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
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
		echo "setup.sh: missing packages $missing; as root: apt-get update && apt-get install -y --no-install-recommends $missing" >&2
		exit 1
	fi
	echo "setup.sh: installing $missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q >/dev/null
	# shellcheck disable=SC2086
	apt-get install -y -q --no-install-recommends $missing >/dev/null
}

# Every integration is required: configured as 'auto', a machine without Catch2 ran "No tests
# defined." and one without MPICH did not even register the MPI tests, both as a pass.
FEATURES=(-Dpapi=enabled -Dlibunwind=enabled -Dwrappers=enabled -Dmpi=all -Dtests=enabled
          -Dexamples=true -Dfuzz_smoke=enabled
          -Dpkgconfig.relocatable=true)  # also in default_options; an existing build dir keeps its old value

# The package that provides a dependency meson could not find.
package_of() {
	case "$1" in
	catch2) echo catch2 ;;
	mpich) echo "mpich libmpich-dev" ;;
	ompi-c) echo "openmpi-bin libopenmpi-dev" ;;
	mpi | MPI*) echo "mpich libmpich-dev openmpi-bin libopenmpi-dev" ;;
	papi) echo libpapi-dev ;;
	libunwind) echo libunwind-dev ;;
	python-3.11 | python3*) echo python3-dev ;;
	threads | m) echo libc6-dev ;;
	*) echo "$1" ;;
	esac
}

# Configure (or re-configure an existing build directory with the required features); a
# missing dependency gives one line with the package to install.
configure() {
	local out rc=0
	local again=()
	[ -f "$BUILD_DIR/build.ninja" ] && again=(--reconfigure)
	out=$(meson setup "${again[@]}" "$BUILD_DIR" --werror -Dbuildtype=debugoptimized \
		--wrap-mode=nodownload "${FEATURES[@]}" 2>&1) || rc=$?
	[ $rc -eq 0 ] && return 0
	local dep
	dep=$(printf '%s\n' "$out" | sed -n 's/.*Dependency "\([^"]*\)".* not found.*/\1/p' | head -n 1)
	[ -n "$dep" ] || dep=$(printf '%s\n' "$out" |
		sed -n 's/.*[Dd]ependency \([A-Za-z0-9_.+-]*\) found: NO.*/\1/p' | tail -n 1)
	case "$dep" in mpich) dep="MPICH (pkg-config mpich)" ;; ompi-c) dep="Open MPI (pkg-config ompi-c)" ;; esac
	if [ -n "$dep" ]; then
		echo "setup.sh: meson cannot find $dep, which the test suite needs; install it: apt-get install -y $(package_of "$dep")" >&2
	else
		printf '%s\n' "$out" | tail -n 20 >&2
		echo "setup.sh: meson setup failed in $BUILD_DIR (the lines above say why)" >&2
	fi
	exit 1
}

build() {
	configure
	meson compile -C "$BUILD_DIR"
}

# Run the whole suite; the closing line counts passes, failures and skips, and a run that
# executed fewer tests than the suite defines (or none) fails.
run_tests() {
	local log rc=0 defined
	defined=$(meson test -C "$BUILD_DIR" --list 2>/dev/null | grep -c ' / ' || true)
	if [ "$defined" -eq 0 ]; then
		echo "setup.sh: the suite defines no tests (is Catch2 installed? apt-get install -y catch2)" >&2
		echo "tests: 0 passed, 0 failed, 0 skipped"
		return 1
	fi
	log=$(mktemp)
	meson test -C "$BUILD_DIR" --print-errorlogs --num-processes 2 | tee "$log" || rc=$?
	# meson's closing counts: "Ok:  38", "Expected Fail:  0", ...
	count() { awk -F: -v k="$1" '$1 == k { gsub(/ /, "", $2); print $2 + 0 }' "$log"; }
	local ok fail skip to xfail xpass
	ok=$(count Ok)
	fail=$(count Fail)
	skip=$(count Skipped)
	to=$(count Timeout)
	xfail=$(count "Expected Fail")
	xpass=$(count "Unexpected Pass")
	rm -f "$log"
	local ran=$((${ok:-0} + ${fail:-0} + ${skip:-0} + ${to:-0} + ${xfail:-0} + ${xpass:-0}))
	if [ "$ran" -lt "$defined" ]; then
		echo "setup.sh: the suite defines $defined tests but $ran ran" >&2
		rc=1
	fi
	if [ "${skip:-0}" -gt 0 ]; then # each skip with the reason the test gave
		awk '/^test: / { t = $0; sub(/^test: +/, "", t) }
		     /^result: / { skip = /exit status 77/; said = 0 }
		     skip && !said && /SKIP: / { sub(/.*SKIP: /, ""); print "skipped: " t ": " $0; said = 1 }' \
			"$BUILD_DIR/meson-logs/testlog.txt"
	fi
	echo "tests: ${ok:-0} passed, $(( ${fail:-0} + ${to:-0} + ${xpass:-0} )) failed, ${skip:-0} skipped"
	return $rc
}

# The main job: a small MPI job (Jones et al.'s 4096 8-byte allreduces, 20 us of work between
# calls) on 2 ranks, one per core, with a CPU hog on rank 1's core for the job's length;
# noisetool run prints the report: which rank made the collectives late, and why.
demo() {
	local nt="$BUILD_DIR/tools/noisetool" prog="$BUILD_DIR/examples/allreduce-loop"
	if [ ! -x "$prog" ] || ! command -v mpiexec.mpich >/dev/null; then
		echo "setup.sh: the demo needs MPICH (mpiexec.mpich) and the examples built" >&2
		return 1
	fi
	# Where -bind-to core puts rank 1 (the hog must share its CPU).
	local cpu
	cpu=$(mpiexec.mpich -n 2 -bind-to core sh -c 'echo "$PMI_RANK $(taskset -pc $$ | sed "s/.*: //")"' |
		awk '$1 == 1 { print $2 }')
	if [ -z "$cpu" ]; then
		echo "setup.sh: the demo needs 2 CPUs (mpiexec.mpich -n 2 -bind-to core)" >&2
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
		mpiexec.mpich -n 2 -bind-to core "$prog" --compute-us 20 --outliers 5 || rc=$?
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
sanitize)
	install_deps
	bash tests/sanitize.sh
	;;
-h | --help | help)
	usage
	;;
*)
	usage >&2
	exit 2
	;;
esac
