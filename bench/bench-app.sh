#!/usr/bin/env bash
# A real application's wall time under the preload (issue 18; doc/bench-app.md): a Debian
# application built on the MPI under test runs a small input from bench/data on 2 ranks, one per
# CPU, with no preload (twice per pair), the bare two-read MPI_Allreduce wrapper (a library that
# does nothing: the bench's own resolution) and the library at its default level. Per pair: the
# wall time of each run, the ratios to the mean of the pair's two runs without preload, and
# whether the pair is kept. The application's numeric results must be the same in every run, and
# each default run must leave a log that noisetool report reads.
# Budget (DESIGN.md section 5): a real application <= 1.01x no tool, median of >= 5 pairs.
set -u
APP=${1:?usage: bench-app.sh bagel|lammps LIB BARE_LIB NOISETOOL DATA_DIR [PAIRS] [MAX_PAIRS]}
LIB=${2:?}
BARE=${3:?}
NOISETOOL=${4:?}
DATA=${5:?}
PAIRS=${6:-5}                    # kept pairs wanted
MAX_PAIRS=${7:-$((2 * PAIRS))}   # pairs run at most to get them
SPREAD=${NT_BENCH_APP_SPREAD:-0.02}
BUDGET=1.01
. "$(dirname "$0")/../tests/lib.sh"
. "$(dirname "$0")/bench-lib.sh"
nt_need_mpiexec
nt_need_cpus 2 "one rank per CPU"

# The application: its program, the library of the MPI it must be linked with, how to install
# it, its command line, and results() -- the numbers of its standard output that must not change,
# one per line, without the timings it prints beside them.
case $APP in
bagel)
	# BAGEL 1.2.2 (Debian's bagel, built on MPICH): DF-MP2 energy and analytic gradient of
	# benzene in def2-TZVPP (270 basis functions), Debian's benzene_svp_mp2 example geometry.
	PROG=BAGEL PKG=bagel MPILIB=libmpich
	ARGS=("$DATA/bagel-benzene-mp2-force.json")
	# SCF and Z-vector iterations (number, energy/residual, error; not the time column), the
	# nuclear repulsion, the MP2 correlation energy, the dipole moments and the gradient.
	results() {
		awk '
		/=== RHF iteration|=== Z-vector iteration/ { it = 1; next }
		it && /^ +[0-9]+ +-?[0-9.]+ / { print "iter", $1, $2, (NF > 3 ? $3 : ""); next }
		/SCF iteration converged|^ *\* / { it = 0 }
		/Nuclear Repulsion/ { getline; getline; print "nuclear", $1 }
		/MP2 correlation energy|MP2 total energy/ { print $1, $2, $4 }
		/Permanent dipole moment/ { getline; print "dipole", $2, $3, $4 }
		/^ +[xyz] +-?[0-9]+\.[0-9]+$/ { print "gradient", $1, $2 }' "$1"
	}
	;;
lammps)
	# LAMMPS 29 Sep 2021 (Debian's lammps, built on Open MPI): a charged Lennard-Jones melt with
	# PPPM, 16,384 atoms, 500 steps.
	PROG=lmp PKG=lammps MPILIB=libmpi.so.40
	ARGS=(-in "$DATA/lammps-melt-pppm.in" -log none -echo none -nocite)
	# The thermo table (printed with 15 digits).
	results() { awk '/^Step /,/^Loop time/ { if ($1 != "Loop") print "thermo", $0 }' "$1"; }
	;;
*)
	echo "bench-app.sh: unknown application '$APP' (bagel or lammps)"
	exit 1
	;;
esac
command -v "$PROG" >/dev/null ||
	nt_skip "$PROG is not installed: apt-get install -y --no-install-recommends $PKG"
ldd "$(command -v "$PROG")" | grep -q "$MPILIB" ||
	nt_skip "$PROG is not linked with $MPILIB, the MPI under test ($NT_MPI)"

modes=(none default none2 bare) # rotated every pair: the two runs without preload stay apart
RANDOM=42                       # the same environment sizes every time the bench runs
nt_tmpdir
logs=$tmp/logs
mkdir -p "$logs" "$tmp/run"

# One run of a mode in an environment of the pair's size (bench_equal_env, bench-lib.sh): its
# standard output in $tmp/MODE.out, standard error in $tmp/MODE.err; prints the wall time in s
# of the whole job (mpiexec included) or nothing if it failed.
run() {
	local mode=$1 base=$2 env=() t0 t1 rc
	case $mode in
	none | none2) env=(LD_PRELOAD "") ;;
	bare) env=(LD_PRELOAD "$(nt_preload "$BARE")") ;;
	default) env=(LD_PRELOAD "$(nt_preload "$LIB")") ;;
	esac
	# One thread per rank: BAGEL starts BAGEL_NUM_THREADS workers, OpenBLAS and LAMMPS's OpenMP
	# their own; two ranks then fill the two CPUs.
	env+=(OMP_NUM_THREADS 1 BAGEL_NUM_THREADS 1 OPENBLAS_NUM_THREADS 1)
	t0=$(date +%s%N)
	(cd "$tmp/run" && bench_equal_env "$base" "$logs" "${env[@]}" -- "$PROG" "${ARGS[@]}") \
		>"$tmp/$mode.out" 2>"$tmp/$mode.err"
	rc=$?
	t1=$(date +%s%N)
	[ $rc = 0 ] && echo "scale=3; ($t1 - $t0) / 1000000000" | bc
}

# check_results MODE PAIR: the run's results equal the reference (the first run's).
check_results() {
	results "$tmp/$1.out" >"$tmp/$1.res"
	if [ ! -s "$tmp/ref.res" ]; then
		[ -s "$tmp/$1.res" ] || { echo "FAIL: pair $2, $1: no results in its output"; tail "$tmp/$1.out"; exit 1; }
		cp "$tmp/$1.res" "$tmp/ref.res"
		return
	fi
	cmp -s "$tmp/$1.res" "$tmp/ref.res" && return
	echo "FAIL: pair $2, $1: the results differ from the first run's:"
	diff "$tmp/ref.res" "$tmp/$1.res" | head -20
	exit 1
}

# check_log PAIR: the default run wrote one log and noisetool report reads it; its report is
# kept in $tmp/report.txt.
check_log() {
	local log
	log=$(ls "$logs"/*.ntlog 2>/dev/null)
	if [ "$(echo "$log" | grep -c .)" != 1 ]; then
		echo "FAIL: pair $1: the default run left no single log in NOISETOOL_OUT:" $log
		tail "$tmp/default.err"
		exit 1
	fi
	"$NOISETOOL" report "$log" --no-symbols --top 0 --late 0 >"$tmp/report.txt" 2>&1 ||
		{ echo "FAIL: pair $1: noisetool report failed on its log:"; tail "$tmp/report.txt"; exit 1; }
	rm -f "$log"
}

ratio() { echo "$1 / $2" | bc -l; }

printf "bench-app: %s (%s), 2 ranks, one per CPU of the mask; wall time of each job in s;\n" \
	"$APP" "$NT_MPI"
printf "ratios to the mean of the pair's two runs without preload; a pair whose two runs without\n"
printf "preload differ by more than %s is left out (the machine changed speed during it)\n\n" \
	"$(echo "$SPREAD * 100" | bc -l | sed 's/0*$//; s/\.$//')%"
printf "%4s  %-26s %8s %8s %7s %8s %8s  %9s %12s  %s\n" pair order none none spread bare \
	default bare/none default/none kept
declare -A wall
kept=() runs=0
for ((p = 1; p <= MAX_PAIRS && ${#kept[@]} < PAIRS; p++)); do
	base=$(((RANDOM % 256) * 16))
	order=()
	for ((k = 0; k < ${#modes[@]}; k++)); do
		m=${modes[$(((k + p - 1) % ${#modes[@]}))]}
		order+=("${m%2}")
		w=$(run "$m" "$base")
		if [ -z "$w" ]; then
			echo "FAIL: pair $p, $m: the job failed:"
			tail -5 "$tmp/$m.out" "$tmp/$m.err"
			exit 1
		fi
		wall[$p,$m]=$w
		runs=$((runs + 1))
		check_results "$m" "$p"
		[ "$m" = default ] && check_log "$p"
	done
	n1=${wall[$p,none]} n2=${wall[$p,none2]}
	none=$(echo "($n1 + $n2) / 2" | bc -l)
	spread=$(echo "if ($n1 > $n2) $n1 / $n2 - 1 else $n2 / $n1 - 1" | bc -l)
	ok=$(echo "$spread <= $SPREAD" | bc -l)
	[ "$ok" = 1 ] && kept+=("$p")
	br=$(ratio "${wall[$p,bare]}" "$none")
	dr=$(ratio "${wall[$p,default]}" "$none")
	ratios_b[$p]=$br ratios_d[$p]=$dr spreads[$p]=$spread
	printf "%4d  %-26s %8.3f %8.3f %6.1f%% %8.3f %8.3f  %9.3f %12.3f  %s\n" "$p" "${order[*]}" \
		"$n1" "$n2" "$(echo "$spread * 100" | bc -l)" "${wall[$p,bare]}" "${wall[$p,default]}" \
		"$br" "$dr" "$([ "$ok" = 1 ] && echo yes || echo 'no: left out')"
done
npairs=$((p - 1))

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) printf "%.3f", v[int((NR + 1) / 2)]; else printf "-" }'; }
range() { sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { if (NR) printf "%.3f-%.3f", lo, hi }'; }

echo
echo "results: the same in all $runs runs ($(awk '{ for (i = 2; i <= NF; i++) n += $i ~ /^[-+(]?[0-9]/ } END { print n }' "$tmp/ref.res") numbers of the application's output, compared exactly)"
# The tool's report of the last default run: its heading, each rank's MPI share, the calls per
# MPI function over all ranks and call sites.
echo "report of the last default run: $(grep -m1 '^[0-9]* ranks, level' "$tmp/report.txt")"
awk '/^ +[0-9]+ +[^ ]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ / { printf "  rank %s: %s s wall, %s %% in MPI\n", $1, $3, $5 }' \
	"$tmp/report.txt"
awk '/^Call sites by MPI time/ { s = 1; getline; next } s && /^MPI_/ { c[$1] += $3; t[$1] += $4 }
	s && /^$/ { s = 0 }
	END { for (f in c) printf "%s %d %.1f\n", f, c[f], t[f] }' "$tmp/report.txt" |
	sort -k3,3gr | awk '{ printf "%s %s %d (%.0f ms)", NR == 1 ? "  calls (all ranks):" : (NR - 1) % 4 ? "" : "\n                    ", $1, $2, $3 }
	END { print "" }'
echo

nk=${#kept[@]}
b=$(for p in "${kept[@]}"; do echo "${ratios_b[$p]}"; done | median)
d=$(for p in "${kept[@]}"; do echo "${ratios_d[$p]}"; done | median)
s=$(for p in $(seq 1 $npairs); do echo "${spreads[$p]}"; done | median)
echo "$nk of $npairs pairs kept; median spread of the two runs without preload $(echo "$s * 100" | bc -l | xargs printf %.1f)%"
if [ "$nk" -gt 0 ]; then
	echo "kept pairs: median bare/none $b ($(for p in "${kept[@]}"; do echo "${ratios_b[$p]}"; done | range)), " \
		"median default/none $d ($(for p in "${kept[@]}"; do echo "${ratios_d[$p]}"; done | range)) (budget <= $BUDGET)"
fi
if [ "$nk" -lt 5 ]; then
	echo "no verdict: $nk pairs kept, the acceptance needs 5 (the machine was too unsteady)"
	exit 0
fi
[ "$(echo "$d <= $BUDGET" | bc -l)" = 1 ] && echo "within budget" || { echo "OVER BUDGET"; exit 1; }
