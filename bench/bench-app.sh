#!/usr/bin/env bash
# A real application's wall time under the preload (issue 18; doc/bench-app.md): a Debian
# application built on the MPI under test runs a small input from bench/data on 2 ranks, one per
# CPU, with no preload (twice per pair), the bare two-read MPI_Allreduce wrapper (a library that
# does nothing: the bench's own resolution) and the library at its default level. Per pair: the
# wall time (and CPU time) of each run and the ratios to the mean of the pair's two runs without
# preload; pairs run until PAIRS of them are kept (rules at keep() below) or MAX_PAIRS ran. The
# application's numeric results must be the same in every run, to the last printed digit; each
# default run must leave a log that noisetool report reads, and whose call-site names
# bench/check-names.py finds true against nm (issue 37: a site named by a function lies inside
# it).
# Budget (DESIGN.md section 5): a real application <= 1.01x no tool, median of >= 5 pairs.
set -u
APP=${1:?usage: bench-app.sh bagel|lammps|pw|nwchem|cp2k|hpcc|abinit LIB BARE_LIB NOISETOOL DATA_DIR [PAIRS] [MAX_PAIRS]}
LIB=${2:?}
BARE=${3:?}
NOISETOOL=${4:?}
DATA=${5:?}
PAIRS=${6:-5}                    # kept pairs wanted
MAX_PAIRS=${7:-$((2 * PAIRS))}   # pairs run at most to get them
SPREAD=${NT_BENCH_APP_SPREAD:-0.02}
BUDGET=1.01 # the whole job, default / none (issue 33: a real application <= 1.01x)
. "$(dirname "$0")/../tests/lib.sh"
. "$(dirname "$0")/bench-lib.sh"
nt_need_mpiexec
nt_need_cpus 2 "one rank per CPU"

# The application: its program, the library of the MPI it must be linked with, how to install
# it, its command line, and results() -- the numbers of its standard output that must not change,
# one per line, without the timings it prints beside them. Each run starts in an empty directory
# holding INPUTS (files of DATA, for an application that reads them from its working directory);
# OUTFILE, when set, is a file the application writes there, added to its standard output; TOL,
# when set, how far apart its numbers may be (else they are compared as printed); NEED, a file
# of another package (NEED_PKG) that it reads; SECTION, when set, the name of a part of the run
# whose time the application prints itself, and section() that time in s from its output (the
# ratio of that part: a part that calls MPI more often than the whole).
INPUTS=() OUTFILE= TOL= NEED= NEED_PKG= SECTION=
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
	# PPPM, 16,384 atoms, 1000 steps.
	PROG=lmp PKG=lammps MPILIB=libmpi.so.40
	ARGS=(-in "$DATA/lammps-melt-pppm.in" -log none -echo none -nocite)
	# The thermo table (printed with 15 digits).
	results() { awk '/^Step /,/^Loop time/ { if ($1 != "Loop") print "thermo", $0 }' "$1"; }
	;;
pw)
	# Quantum ESPRESSO 6.7 pw.x (Debian's quantum-espresso, built on Open MPI): SCF, forces and
	# stress of bulk silicon (2 atoms, one displaced), LDA, 24 Ry, 6x6x6 k-points.
	PROG=pw.x PKG=quantum-espresso MPILIB=libmpi.so.40
	INPUTS=(qe-si-scf.in Si.pz-vbc.UPF)
	ARGS=(-in qe-si-scf.in)
	# Every SCF iteration's energy and accuracy, the final energy and its terms, the highest
	# level, the forces and the stress (not the cpu-time lines).
	results() {
		awk '/total energy|estimated scf accuracy|contribution|highest occupied|force =|Total force|P=/ { print "pw", $0 }
		/total   stress/ { for (i = 0; i < 3; i++) { getline; print "stress", $0 } }' "$1"
	}
	;;
nwchem)
	# NWChem 7.0.2 (Debian's nwchem, the Open MPI build): B3LYP/6-311++G(2d,2p) geometry
	# optimization of water (3 steps).
	PROG=nwchem PKG=nwchem MPILIB=libmpi.so.40
	INPUTS=(nwchem-h2o-opt.nw)
	ARGS=(nwchem-h2o-opt.nw)
	# Every converged total DFT energy, the optimizer's steps (without their wall time) and every
	# gradient table. NWChem's numbers are not the same from run to run without any preload (its
	# Fock and grid work is handed out by a shared counter, so the sums' order varies): the
	# first SCF iteration's energy moved by up to 5e-8 between runs (-76.4214329386 and
	# -76.4214329873), the converged energies by up to 3e-11 (-76.462796003718, ...703, ...687),
	# while the gradients and the optimizer's lines were identical. So the SCF iterations are
	# left out and the numbers compared within 1e-8 (Hartree).
	TOL=1e-8
	results() {
		awk '/Total DFT energy/ { print "energy", $NF }
		/^@ +[0-9]/ { $NF = ""; print "opt", $0 }
		/ENERGY GRADIENTS/ { g = 1; next }
		g && NF == 8 && $1 ~ /^[0-9]+$/ { print "gradient", $0; next }
		g && /----/ { g = 0 }' "$1"
	}
	;;
cp2k)
	# CP2K 2023.1 (Debian's cp2k, cp2k.psmp on Open MPI): Quickstep (GPW, Pade LDA, DZVP) MD of
	# one water molecule, 5 steps of 0.1 fs: CP2K's own H2O.inp example.
	PROG=cp2k.psmp PKG=cp2k MPILIB=libmpi.so.40
	INPUTS=(cp2k-h2o-md.inp)
	ARGS=(-i cp2k-h2o-md.inp)
	# Every SCF step (without its time column), the energies and the MD step summaries (not
	# the CPU time per step or the memory).
	results() {
		awk '/Step +Update method +Time/ { s = 1; next } /SCF run converged|SCF run NOT converged/ { s = 0 }
		s && $1 ~ /^[0-9]+$/ { $(NF - 3) = ""; print "scf", $0 }
		/Total energy:|ENERGY\|/ { print "energy", $NF }
		/^ MD(_INI)?\| (Step number|Conserved|Energy drift|Potential|Kinetic|Temperature)/ { print $0 }' "$1"
	}
	;;
hpcc)
	# HPCC 1.5.0 (Debian's hpcc, built on Open MPI): the whole suite with HPL N = 2000 on a 1x2
	# grid; the results are its residuals and error counts (the rest are speeds), without the
	# DGEMM test's "Scaled residual", which is of random matrices drawn anew each run (0.0108
	# and 0.00997 in two runs without preload).
	PROG=hpcc PKG=hpcc MPILIB=libmpi.so.40
	INPUTS=(hpccinf.txt)
	OUTFILE=hpccoutf.txt
	ARGS=()
	# Issue 37: the whole suite within 1.03x, its MPI RandomAccess within 1.1x: small messages
	# by the million, the tool's worst case. Its time is that of its two update loops, as HPCC
	# prints them (MPIRandomAccess_time and MPIRandomAccess_LCG_time, s).
	BUDGET=1.03 SECTION=MPIRandomAccess SECTION_BUDGET=1.1
	section() {
		awk -F= '/^MPIRandomAccess(_LCG)?_time=/ { t += $2; n++ } END { if (n == 2) printf "%.6f\n", t }' "$1"
	}
	results() {
		awk '/Found [0-9]+ errors|Node\(s\) with error|\|\|Ax-b\|\||tests completed and/ { print "check", $0 }
		/^(HPL_N|HPL_NB|PTRANS_residual|PTRANS_n|MPIRandomAccess.*_(N|Errors|ErrorsFraction)|RandomAccess.*_N|(MPI)?FFT_(N|maxErr)|DGEMM_N)=/ { print "summary", $0 }' "$1"
	}
	;;
abinit)
	# ABINIT 9.6.2 (Debian's abinit, built on Open MPI): ground state of bulk silicon (2 atoms,
	# one displaced), LDA Troullier-Martins, 12 Ha, 4x4x4 k-grid with 4 shifts: energy, forces,
	# stress.
	PROG=abinit PKG=abinit MPILIB=libmpi.so.40
	NEED=/usr/share/abinit/psp/14si.pspnc NEED_PKG=abinit-data # only recommended by abinit
	INPUTS=(abinit-si.abi)
	ARGS=(abinit-si.abi)
	# The SCF iterations, the energy terms and the final values (etotal, fcart, strten, with
	# their continuation lines).
	results() {
		awk '/^ ETOT / { print "scf", $0 }
		/^ E[a-z_]+ *= :/ { print "term", $0 }
		/^ +(etotal|fcart|strten) / { k = 1; print "final", $0; next }
		k && /^ +-?[0-9]/ { print "final", $0; next } { k = 0 }' "$1"
	}
	;;
*)
	echo "bench-app.sh: unknown application '$APP' (bagel, lammps, pw, nwchem, cp2k, hpcc or abinit)"
	exit 1
	;;
esac
command -v "$PROG" >/dev/null ||
	nt_skip "$PROG is not installed: apt-get install -y --no-install-recommends $PKG"
[ -z "$NEED" ] || [ -e "$NEED" ] ||
	nt_skip "$NEED is missing: apt-get install -y --no-install-recommends $NEED_PKG"
ldd "$(command -v "$PROG")" | grep -q "$MPILIB" ||
	nt_skip "$PROG is not linked with $MPILIB, the MPI under test ($NT_MPI)"

# The names check checks itself first (made-up sites in libc: a right name, two wrong ones).
python3 "$(dirname "$0")/check-names.py" --self-test >/dev/null ||
	{ echo "FAIL: check-names.py --self-test:"; python3 "$(dirname "$0")/check-names.py" --self-test; exit 1; }

modes=(none default none2 bare) # rotated every pair: the two runs without preload stay apart
RANDOM=42                       # the same environment sizes every time the bench runs
nt_tmpdir
logs=$tmp/logs
mkdir -p "$logs" "$tmp/run"

# One run of a mode in an environment of the pair's size (bench_equal_env, bench-lib.sh): its
# standard output in $tmp/MODE.out, standard error in $tmp/MODE.err; prints "WALL CPU": the wall
# time in s of the whole job (mpiexec included) and the CPU time (user + system) of all its
# processes, or nothing if it failed.
TIMEFORMAT='%3R %3U %3S' # bash's time keyword (a local TIMEFORMAT is not read)
run() {
	local mode=$1 base=$2 env=() rc
	case $mode in
	none | none2) env=(LD_PRELOAD "") ;;
	bare) env=(LD_PRELOAD "$(nt_preload "$BARE")") ;;
	default) env=(LD_PRELOAD "$(nt_preload "$LIB")") ;;
	esac
	# One thread per rank: BAGEL starts BAGEL_NUM_THREADS workers, OpenBLAS and LAMMPS's OpenMP
	# their own; two ranks then fill the two CPUs.
	env+=(OMP_NUM_THREADS 1 BAGEL_NUM_THREADS 1 OPENBLAS_NUM_THREADS 1)
	rm -rf "$tmp/run" && mkdir "$tmp/run" && for f in "${INPUTS[@]}"; do cp "$DATA/$f" "$tmp/run/"; done
	{ time (cd "$tmp/run" && bench_equal_env "$base" "$logs" "${env[@]}" -- "$PROG" "${ARGS[@]}" \
		>"$tmp/$mode.out" 2>"$tmp/$mode.err"); } 2>"$tmp/$mode.time"
	rc=$?
	[ -z "$OUTFILE" ] || cat "$tmp/run/$OUTFILE" >>"$tmp/$mode.out" 2>/dev/null
	[ $rc = 0 ] && awk '{ printf "%.3f %.3f\n", $1, $2 + $3 }' "$tmp/$mode.time"
}

# same_within A B TOL: A and B have the same lines of the same words, and where they differ both
# words are numbers (Fortran's 1.0D-05 included) less than TOL apart.
same_within() {
	awk -v tol="$3" 'function num(w) { gsub(/[dD]/, "e", w); return w + 0 }
	function isnum(w) { return w ~ /^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eEdD][-+]?[0-9]+)?$/ }
	NR == FNR { a[FNR] = $0; n = FNR; next }
	{ if (!(FNR in a)) exit 1
	  na = split(a[FNR], x); nb = split($0, y); if (na != nb) exit 1
	  for (i = 1; i <= na; i++) if (x[i] != y[i]) {
		if (!isnum(x[i]) || !isnum(y[i])) exit 1
		d = num(x[i]) - num(y[i]); if (d < 0) d = -d; if (d >= tol) exit 1 } }
	END { if (FNR != n) exit 1 }' "$1" "$2"
}

# check_results MODE PAIR: the run's results equal the reference (the first run's), as printed;
# with TOL, numbers within TOL of the reference's (for an application whose own results vary).
check_results() {
	results "$tmp/$1.out" >"$tmp/$1.res"
	if [ ! -s "$tmp/ref.res" ]; then
		[ -s "$tmp/$1.res" ] || { echo "FAIL: pair $2, $1: no results in its output"; tail "$tmp/$1.out"; exit 1; }
		cp "$tmp/$1.res" "$tmp/ref.res"
		return
	fi
	cmp -s "$tmp/$1.res" "$tmp/ref.res" && return
	[ -n "$TOL" ] && same_within "$tmp/ref.res" "$tmp/$1.res" "$TOL" && return
	echo "FAIL: pair $2, $1: the results differ from the first run's${TOL:+ by more than $TOL}:"
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
	# The call-site names (check-names.py): outside the timed runs. A wrong name fails the bench
	# at its end, after the table.
	python3 "$(dirname "$0")/check-names.py" --noisetool "$NOISETOOL" --app "$APP" "$log" \
		>"$tmp/names.txt" 2>&1
	case $? in
	0) ;;
	1) names_wrong=$((names_wrong + 1)) && cp "$tmp/names.txt" "$tmp/names-wrong.txt" ;;
	*) echo "FAIL: pair $1: check-names.py could not check the log:"; cat "$tmp/names.txt"; exit 1 ;;
	esac
	sed "s/^/pair $1: /" "$tmp/names.txt" >>"$tmp/names-all.txt"
	# NT_BENCH_APP_KEEP=DIR keeps the last default run's log there, as APP.ntlog (to read again:
	# check-names.py -v DIR/APP.ntlog).
	[ -z "${NT_BENCH_APP_KEEP:-}" ] || cp "$log" "$NT_BENCH_APP_KEEP/$APP.ntlog"
	rm -f "$log"
}
names_wrong=0

ratio() { echo "$1 / $2" | bc -l; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) printf "%.3f", v[int((NR + 1) / 2)]; else printf "-" }'; }
range() { sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { if (NR) printf "%.3f-%.3f", lo, hi }'; }
pct() { echo "$1 * 100" | bc -l | xargs printf %.1f; }

# Which pairs count. The wall time of a job is the application's compute as much as the CPUs it
# gets: on this VM other jobs (the lead's benches, another helper's) take CPUs for seconds to
# minutes, and one job's wall time then moves by 2x. A pair is kept when
#   1. its two runs without preload agree within SPREAD (2 %): the machine did not change speed
#      between them, around its tool runs; and
#   2. its none, none and default runs each took at most QUIET (1.10) x the fastest run of the
#      bench in any mode: the runs of the ratio ran on a quiet machine (the bare run is not in
#      the verdict; bare/none is taken over the kept pairs whose bare run passes this too).
#      Rule 1 alone keeps pairs run wholly under a steady load whose tool run fell in a quiet
#      gap (seen: 29.4 and 29.9 s without preload around a 20.0 s default run). 10 % is ten
#      times the budget: a tool costing more than that is left with no pair, hence no verdict,
#      never a pass.
# keep P: 0 if pair P counts by the fastest run so far; why[P] says why not.
SPREAD_PCT=$(pct "$SPREAD")
QUIET=${NT_BENCH_APP_QUIET:-1.10}
declare -A why
quiet() { [ "$(echo "${wall[$1,$2]} <= $QUIET * $fastest" | bc -l)" = 1 ]; }
keep() {
	local p=$1 m
	why[$p]=
	if [ "$(echo "${spreads[$p]} > $SPREAD" | bc -l)" = 1 ]; then
		why[$p]="its two runs without preload differ by $(echo "${spreads[$p]} * 100" | bc -l | xargs printf %.2f)%"
		return 1
	fi
	for m in none none2 default; do
		if ! quiet "$p" "$m"; then
			why[$p]="its ${m%2} run took ${wall[$p,$m]} s, over ${QUIET}x the fastest run ($fastest s)"
			return 1
		fi
	done
}
kept_pairs() {
	local p
	for ((p = 1; p <= npairs; p++)); do
		keep "$p" && echo "$p"
	done
}

printf "bench-app: %s (%s), 2 ranks, one per CPU of the mask; wall time of each job in s\n" \
	"$APP" "$NT_MPI"
printf "(mpiexec included) and the CPU time of all its processes; ratios to the mean of the\n"
printf "pair's two runs without preload; pairs kept as explained below the table\n\n"
printf "%4s  %-26s %8s %8s %7s %8s %8s  %9s %12s %9s\n" pair order none none spread bare \
	default bare/none default/none "cpu d/n"
declare -A wall cpu sec
declare -a spreads ratios_b ratios_d ratios_c ratios_s ratios_sb
runs=0 fastest= npairs=0 kept=()
while [ "$npairs" -lt "$MAX_PAIRS" ] && [ ${#kept[@]} -lt "$PAIRS" ]; do
	p=$((npairs + 1))
	base=$(((RANDOM % 256) * 16))
	order=()
	for ((k = 0; k < ${#modes[@]}; k++)); do
		m=${modes[$(((k + p - 1) % ${#modes[@]}))]}
		order+=("${m%2}")
		read -r w c < <(run "$m" "$base")
		if [ -z "${w:-}" ]; then
			echo "FAIL: pair $p, $m: the job failed:"
			tail -n 5 "$tmp/$m.out" "$tmp/$m.err"
			exit 1
		fi
		wall[$p,$m]=$w cpu[$p,$m]=$c
		if [ -n "$SECTION" ]; then
			sec[$p,$m]=$(section "$tmp/$m.out")
			[ -n "${sec[$p,$m]}" ] ||
				{ echo "FAIL: pair $p, $m: no $SECTION time in its output"; exit 1; }
		fi
		[ -z "$fastest" ] || [ "$(echo "$w < $fastest" | bc -l)" = 1 ] && fastest=$w
		runs=$((runs + 1))
		check_results "$m" "$p"
		[ "$m" = default ] && check_log "$p"
	done
	n1=${wall[$p,none]} n2=${wall[$p,none2]}
	none=$(echo "($n1 + $n2) / 2" | bc -l)
	spreads[$p]=$(echo "if ($n1 > $n2) $n1 / $n2 - 1 else $n2 / $n1 - 1" | bc -l)
	ratios_b[$p]=$(ratio "${wall[$p,bare]}" "$none")
	ratios_d[$p]=$(ratio "${wall[$p,default]}" "$none")
	ratios_c[$p]=$(ratio "${cpu[$p,default]}" "((${cpu[$p,none]} + ${cpu[$p,none2]}) / 2)")
	if [ -n "$SECTION" ]; then
		ratios_s[$p]=$(ratio "${sec[$p,default]}" "((${sec[$p,none]} + ${sec[$p,none2]}) / 2)")
		ratios_sb[$p]=$(ratio "${sec[$p,bare]}" "((${sec[$p,none]} + ${sec[$p,none2]}) / 2)")
	fi
	printf "%4d  %-26s %8.3f %8.3f %6.1f%% %8.3f %8.3f  %9.3f %12.3f %9.3f\n" "$p" "${order[*]}" \
		"$n1" "$n2" "$(pct "${spreads[$p]}")" "${wall[$p,bare]}" "${wall[$p,default]}" \
		"${ratios_b[$p]}" "${ratios_d[$p]}" "${ratios_c[$p]}"
	npairs=$p
	mapfile -t kept < <(kept_pairs)
done

echo
echo "results: the same in all $runs runs ($(awk '{ for (i = 2; i <= NF; i++) n += $i ~ /^[-+(]?[0-9]/ } END { print n }' "$tmp/ref.res") numbers of the application's output, compared ${TOL:+within $TOL, else }as printed)"
# The tool's report of the last default run: its heading, each rank's MPI share, the calls per
# MPI function over all ranks and call sites.
echo "report of the last default run: $(grep -m1 '^[0-9]* ranks, level' "$tmp/report.txt")"
awk '/^ +rank +host +wall s / { t = 1; next } t && !NF { t = 0 }
	t && /^ +[0-9]+ +[^ ]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ / { printf "  rank %s: %s s wall, %s %% in MPI\n", $1, $3, $5 }' \
	"$tmp/report.txt"
awk '/^Call sites by MPI time/ { s = 1; getline; next } s && /^MPI_/ { c[$1] += $3; t[$1] += $4 }
	s && /^$/ { s = 0 }
	END { for (f in c) printf "%s %d %.1f\n", f, c[f], t[f] }' "$tmp/report.txt" |
	sort -k3,3gr | awk '{ printf "%s %s %d (%.0f ms)", NR == 1 ? "  calls (all ranks):" : (NR - 1) % 4 ? "" : "\n                    ", $1, $2, $3 }
	END { print "" }'

# The names of the call sites (issue 37): every default run's report checked against nm.
echo "call-site names, every default run's report against nm (check-names.py):"
awk '/names / { sub(/^pair [0-9]+: names [^:]*: /, ""); n[$0]++ } END { for (k in n) printf "  %d run%s: %s\n", n[k], (n[k] > 1 ? "s" : ""), k }' \
	"$tmp/names-all.txt"
[ "$names_wrong" = 0 ] || { echo "WRONG NAMES in $names_wrong default runs; the last:"; cat "$tmp/names-wrong.txt"; }

echo
echo "kept: pairs whose two runs without preload agree within $SPREAD_PCT% and whose none and default"
echo "runs took at most ${QUIET}x the fastest run of the bench ($fastest s)"
for ((p = 1; p <= npairs; p++)); do
	keep "$p" || echo "pair $p left out: ${why[$p]}"
done
nk=${#kept[@]}
all_d=$(for ((p = 1; p <= npairs; p++)); do echo "${ratios_d[$p]}"; done | median)
all_c=$(for ((p = 1; p <= npairs; p++)); do echo "${ratios_c[$p]}"; done | median)
all_s=$(for ((p = 1; p <= npairs; p++)); do echo "${spreads[$p]}"; done | median)
echo "all $npairs pairs (indicative only): median default/none wall $all_d, CPU time $all_c;" \
	"median spread of the two runs without preload $(pct "$all_s")%"
if [ "$nk" -gt 0 ]; then
	bare_ok=()
	for p in "${kept[@]}"; do
		quiet "$p" bare && bare_ok+=("$p")
	done
	b=$(for p in "${bare_ok[@]}"; do echo "${ratios_b[$p]}"; done | median)
	d=$(for p in "${kept[@]}"; do echo "${ratios_d[$p]}"; done | median)
	c=$(for p in "${kept[@]}"; do echo "${ratios_c[$p]}"; done | median)
	if [ ${#bare_ok[@]} -gt 0 ]; then
		bare="bare/none $b ($(for p in "${bare_ok[@]}"; do echo "${ratios_b[$p]}"; done | range), ${#bare_ok[@]} pairs)"
	else # the floor's two counter reads a call cost more than the quiet runs' margin
		bare="bare/none: no bare run within ${QUIET}x the fastest run"
	fi
	echo "$nk kept pairs: median $bare," \
		"default/none $d ($(for p in "${kept[@]}"; do echo "${ratios_d[$p]}"; done | range); budget <= $BUDGET), CPU time default/none $c"
fi
if [ -n "$SECTION" ]; then
	# The part's own time, as the application measured it, bare and default / mean of the
	# pair's two runs without preload: every pair, and the kept ones. The bare wrapper's is
	# the floor: its two counter reads a call.
	for ((p = 1; p <= npairs; p++)); do
		printf "  pair %d: %s %s s none, %s s none, %s s bare, %s s default: bare/none %.3f, default/none %.3f\n" \
			"$p" "$SECTION" "${sec[$p,none]}" "${sec[$p,none2]}" "${sec[$p,bare]}" \
			"${sec[$p,default]}" "${ratios_sb[$p]}" "${ratios_s[$p]}"
	done
	s_all=$(for ((p = 1; p <= npairs; p++)); do echo "${ratios_s[$p]}"; done | median)
	sb_all=$(for ((p = 1; p <= npairs; p++)); do echo "${ratios_sb[$p]}"; done | median)
	s_kept=$(for p in "${kept[@]}"; do echo "${ratios_s[$p]}"; done | median)
	echo "$SECTION, of its own time: median bare/none $sb_all, default/none $s_all over all" \
		"$npairs pairs; default/none $s_kept over the $nk kept (budget <= $SECTION_BUDGET)"
fi
[ "$names_wrong" = 0 ] || { echo "FAIL: a call site is named by a function that does not contain it"; exit 1; }
if [ "$nk" -lt 5 ]; then
	echo "no verdict: $nk pairs kept of $npairs, the acceptance needs 5 (the machine was not quiet enough)"
	exit 0
fi
[ "$(echo "$d <= $BUDGET" | bc -l)" = 1 ] && echo "within budget" || { echo "OVER BUDGET"; exit 1; }
if [ -n "$SECTION" ]; then
	[ "$(echo "$s_kept <= $SECTION_BUDGET" | bc -l)" = 1 ] && echo "$SECTION within budget" ||
		{ echo "$SECTION OVER BUDGET"; exit 1; }
fi
