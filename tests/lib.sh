# Sourced by the shell tests: skips with a reason, the CPUs of this process's affinity mask
# (never a hard-coded CPU number or nproc's count of the machine), MPI process binding inside
# that mask, bounded CPU hogs that are always reaped, and scratch directories removed at exit.
#
#   . "$(dirname "$0")/../lib.sh"      (or ../lib.sh from tests/integration)
#
# The sourcing script must not set its own EXIT trap: it registers what to undo with
# nt_on_exit instead.

NT_SKIP=77
NT_ON_EXIT=()

nt_at_exit() {
	local i
	for ((i = ${#NT_ON_EXIT[@]} - 1; i >= 0; i--)); do
		eval "${NT_ON_EXIT[i]}"
	done
}
trap nt_at_exit EXIT

# nt_on_exit CMD: run CMD (a string, eval'd) when the script exits, the last registered first
# (what was set up inside the scratch directory goes before the directory).
nt_on_exit() { NT_ON_EXIT+=("$1"); }

# nt_skip REASON...: the test cannot run here (a precondition the machine lacks): exit 77.
nt_skip() {
	echo "SKIP: $*"
	exit $NT_SKIP
}

# nt_launch SECONDS RUN ARGS...: mpiexec ARGS under timeout (a hang is a failure: rc 124) into
# $tmp/RUN.out, RUN.err and RUN.rc; stdin from /dev/null: mpiexec forwards its stdin to rank 0
# and would eat a caller's here-document. Needs $tmp (nt_tmpdir).
nt_launch() {
	local limit=$1 run=$2
	shift 2
	timeout -k 10 "$limit" mpiexec "$@" </dev/null >"$tmp/$run.out" 2>"$tmp/$run.err"
	echo $? >"$tmp/$run.rc"
}

# nt_tmpdir: a scratch directory in $tmp, removed at exit.
nt_tmpdir() {
	tmp=$(mktemp -d) || exit 1
	nt_on_exit "rm -rf '$tmp'"
}

# nt_cpus: the CPUs this process may run on, one per line, ascending.
nt_cpus() {
	local list part
	list=$(awk '/^Cpus_allowed_list:/ { print $2 }' /proc/self/status)
	IFS=, read -r -a parts <<<"$list"
	for part in "${parts[@]}"; do
		case "$part" in
		*-*) seq "${part%-*}" "${part#*-}" ;;
		*) echo "$part" ;;
		esac
	done
}

# nt_ncpus: how many CPUs this process may run on.
nt_ncpus() { nt_cpus | wc -l; }

# The MPI under test: meson runs each MPI test once per MPI, with NT_MPI=mpich or ompi. Its
# launcher and compilers are named explicitly (mpiexec.mpich, mpicc.openmpi, ...), never the
# `mpi` alternative, which points at one of them; `mpiexec` in a test is tests/launch/mpiexec,
# which starts the launcher of NT_MPI with the hydra-style options the tests use.
NT_MPI=${NT_MPI:-mpich}
case "$NT_MPI" in
mpich) NT_MPI_SUFFIX=mpich NT_MPI_PACKAGES="mpich libmpich-dev" ;;
ompi) NT_MPI_SUFFIX=openmpi NT_MPI_PACKAGES="openmpi-bin libopenmpi-dev" ;;
*)
	echo "FAIL: NT_MPI='$NT_MPI': expected mpich or ompi"
	exit 1
	;;
esac
NT_MPIEXEC=mpiexec.$NT_MPI_SUFFIX
NT_MPICC=mpicc.$NT_MPI_SUFFIX
NT_MPIF90=mpif90.$NT_MPI_SUFFIX
export NT_MPI
PATH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/launch:$PATH"
# Under the ASan setup (tests/sanitize.sh), Open MPI 4.1's jobs are not leak-checked: its
# components leak hundreds of small allocations at exit and are unloaded before LeakSanitizer
# reports them ("<unknown module>", which no suppression can name), without our library too.
# ASan and UBSan still check every Open MPI job; leaks are checked under MPICH, with the same
# library code (Open MPI's adds Fortran entry points, which allocate nothing).
if [ "$NT_MPI" = ompi ] && [ -n "${ASAN_OPTIONS:-}" ]; then
	export ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0"
fi
# Open MPI refuses to start as root without both (CI runs as root).
if [ "$(id -u)" -eq 0 ]; then
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

# nt_need_mpiexec: the launcher of the MPI under test. The suite is configured with that MPI
# found, so a missing launcher is a broken set-up, not a skip.
nt_need_mpiexec() {
	command -v "$NT_MPIEXEC" >/dev/null && return 0
	echo "FAIL: no $NT_MPIEXEC although the wrappers were built for it: apt-get install -y $NT_MPI_PACKAGES"
	exit 1
}

# nt_need_mpi4 WHAT: skip unless the MPI under test implements MPI 4 (NT_MPI_VERSION, from its
# mpi.h, set by meson): Open MPI 4.1 is MPI 3.1, without persistent collectives.
nt_need_mpi4() {
	[ "${NT_MPI_VERSION:-4}" -ge 4 ] ||
		nt_skip "$NT_MPIEXEC runs MPI ${NT_MPI_VERSION}.x; $1 is MPI 4"
}

# nt_need_python WHAT: skip unless python3 is here (Debian's first): PY is it. WHAT says what it
# is needed for.
nt_need_python() {
	local py
	for py in /usr/bin/python3 python3; do
		command -v "$py" >/dev/null && PY=$py && return 0
	done
	nt_skip "no python3 to $1"
}

# nt_need_plot: skip unless a Python that draws pages (matplotlib) is here, as noisetool's --html
# finds it (NOISETOOL_PYTHON, python3, /usr/bin/python3): NT_PYTHON is it, NT_PLOT_DIR the
# plotting helper's source (tools/plot). Its selenium drives chromium for tests/html/check-page.py.
nt_need_plot() {
	NT_PLOT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/../tools/plot" && pwd)
	local py
	for py in ${NOISETOOL_PYTHON:-} python3 /usr/bin/python3; do
		if command -v "$py" >/dev/null && "$py" -c 'import matplotlib, selenium' 2>/dev/null; then
			NT_PYTHON=$py
			return 0
		fi
	done
	nt_skip "no Python with matplotlib and selenium (apt install python3-matplotlib python3-selenium)"
}

# nt_need_cpus N WHY: skip unless this process may run on N CPUs or more.
nt_need_cpus() {
	local have
	have=$(nt_ncpus)
	[ "$have" -ge "$1" ] || nt_skip "needs $1 CPUs in the affinity mask, has $have: $2"
}

# nt_bind NP: the binding of NP ranks round-robin onto the allowed CPUs, in hydra's words
# ("-bind-to user:0,1,0,1"; tests/launch/mpiexec makes it a rankfile for Open MPI). -bind-to core would place ranks on CPUs outside the mask (under
# taskset -c 1 it put rank 0 on CPU 0).
nt_bind() {
	local np=$1 cpus list="" i
	mapfile -t cpus < <(nt_cpus)
	for ((i = 0; i < np; i++)); do
		list+="${list:+,}${cpus[i % ${#cpus[@]}]}"
	done
	echo "-bind-to user:$list"
}

# nt_rank_cpu NP RANK: the CPU nt_bind NP gives RANK.
nt_rank_cpu() {
	local cpus
	mapfile -t cpus < <(nt_cpus)
	echo "${cpus[$2 % ${#cpus[@]}]}"
}

# nt_hog CPU: a spinning process pinned to CPU at the default priority, until nt_hog_stop or
# the script's exit (bounded to 15 minutes in any case). Its pid is in $NT_HOG.
nt_hog() {
	taskset -c "$1" timeout 900 sh -c 'while :; do :; done' &
	NT_HOG=$!
	nt_on_exit "kill $NT_HOG 2>/dev/null; wait $NT_HOG 2>/dev/null"
}

# nt_named_hog CPU NAME: nt_hog under a name of its own (the task's name is its executable's
# file name: sh, linked as NAME in $tmp), for the tests that look for it by name.
nt_named_hog() {
	ln -sf "$(command -v sh)" "$tmp/$2"
	taskset -c "$1" timeout 900 "$tmp/$2" -c 'while :; do :; done' &
	NT_HOG=$!
	nt_on_exit "kill $NT_HOG 2>/dev/null; wait $NT_HOG 2>/dev/null"
}

# nt_hog_stop: stop the latest hog now.
nt_hog_stop() {
	[ -n "${NT_HOG:-}" ] || return 0
	kill "$NT_HOG" 2>/dev/null
	wait "$NT_HOG" 2>/dev/null
	NT_HOG=
}

# nt_preload LIB: the LD_PRELOAD value that loads LIB into a job. Under a sanitizer test setup
# NT_PRELOAD_FIRST names the sanitizer's runtime, which must come first.
nt_preload() { echo "${NT_PRELOAD_FIRST:+$NT_PRELOAD_FIRST:}$1"; }

# nt_peak_kib FILE: the largest peak resident set a job's ranks printed in FILE, as the MPI test
# programs do after MPI_Finalize ("rank R peak-rss-kb KIB", tests/mpi/peak-rss.h); 0 for none.
nt_peak_kib() { awk '/peak-rss-kb/ && $4 > m { m = $4 } END { print m + 0 }' "$1"; }
