#!/usr/bin/env bash
# The cost of Python call sites (doc/python.md) on a 2-rank mpi4py loop of 8-byte
# comm.Allreduce calls (one rank per CPU), in alternating runs (the order rotates every pair):
# no preload, the library with NOISETOOL_DISABLE=1 (off), the default level with the extension's
# C call sites (NOISETOOL_PYTHON_SITES=0: what mpi4py jobs got before) and the default level
# with Python call sites. Each run gives a median per-call time; the table shows each pair's
# per-call ns and ratios, and the median over pairs of the Python frame read's cost per call
# (Python sites - C sites). mpi4py: Debian's python3-mpi4py, run by /usr/bin/python3.
set -u
LIB=${1:?usage: bench-python.sh LIB PYTHON_LOOP [PAIRS] [BATCHES]}
PROG=${2:?}
PAIRS=${3:-7}
BATCHES=${4:-2000}
PY=/usr/bin/python3
. "$(dirname "$0")/../tests/lib.sh"
nt_need_mpiexec
nt_need_cpus 2 "one rank per CPU"
"$PY" -c 'import mpi4py' 2>/dev/null ||
	{ echo "FAIL: $PY cannot import mpi4py: apt-get install -y python3-mpi4py"; exit 1; }

modes=(none off csites python)
run() {
	local env=()
	case $1 in
	none) env=(-genv LD_PRELOAD "" -genv NOISETOOL_PYTHON_SITES 1) ;;
	off) env=(-genv LD_PRELOAD "$LIB" -genv NOISETOOL_DISABLE 1) ;;
	csites) env=(-genv LD_PRELOAD "$LIB" -genv NOISETOOL_PYTHON_SITES 0) ;;
	python) env=(-genv LD_PRELOAD "$LIB" -genv NOISETOOL_PYTHON_SITES 1) ;;
	esac
	timeout 300 mpiexec -n 2 $(nt_bind 2) "${env[@]}" -genv NOISETOOL_OUT "$tmp" \
		-genv NOISETOOL_SUMMARY 0 "$PY" "$PROG" "$BATCHES" 2>/dev/null |
		awk '/median_per_call_ns/ { print $2 }'
}

nt_tmpdir
declare -A med
printf "bench-python: %d pairs, %d batches of 100 comm.Allreduce (8 bytes) per run, 2 ranks\n\n" \
	"$PAIRS" "$BATCHES"
printf "%4s %9s %9s %10s %10s   %7s %7s %7s %9s\n" pair "none ns" "off ns" "C-site ns" \
	"py-site ns" off C-site py-site "frame ns"
for p in $(seq 1 "$PAIRS"); do
	for ((k = 0; k < ${#modes[@]}; k++)); do
		m=${modes[$(((k + p) % ${#modes[@]}))]}
		med[$p,$m]=$(run "$m")
		[ -n "${med[$p,$m]}" ] || { echo "FAIL: pair $p, mode $m: no result"; exit 1; }
	done
	printf "%4d %9s %9s %10s %10s   %7.3f %7.3f %7.3f %9.1f\n" "$p" "${med[$p,none]}" \
		"${med[$p,off]}" "${med[$p,csites]}" "${med[$p,python]}" \
		"$(echo "${med[$p,off]} / ${med[$p,none]}" | bc -l)" \
		"$(echo "${med[$p,csites]} / ${med[$p,none]}" | bc -l)" \
		"$(echo "${med[$p,python]} / ${med[$p,none]}" | bc -l)" \
		"$(echo "${med[$p,python]} - ${med[$p,csites]}" | bc -l)"
done
median() { sort -g | awk '{ v[NR] = $1 } END { printf "%.3f", v[int((NR + 1) / 2)] }'; }
ratio() { for p in $(seq 1 "$PAIRS"); do echo "${med[$p,$1]} / ${med[$p,none]}" | bc -l; done | median; }
per_call() { for p in $(seq 1 "$PAIRS"); do echo "${med[$p,$1]} - ${med[$p,none]}" | bc -l; done | median; }
frame=$(for p in $(seq 1 "$PAIRS"); do echo "${med[$p,python]} - ${med[$p,csites]}" | bc -l; done | median)
echo
echo "median ratio to no preload: off $(ratio off), default with C sites $(ratio csites)," \
	"default with Python sites $(ratio python)"
echo "median cost per call over no preload: off $(per_call off) ns, C sites $(per_call csites) ns," \
	"Python sites $(per_call python) ns; the Python frame read: $frame ns per call"
