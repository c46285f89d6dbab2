# What the alternating benchmarks share (bench-overhead.sh, bench-p2p.sh); sourced after
# tests/lib.sh.

# bench_equal_env BASE LOGS NAME VALUE [NAME VALUE ...] -- PROGRAM ARGS...: a 2-rank job, one rank
# per CPU of the mask, with those variables set and NOISETOOL_OUT=LOGS. NT_BENCH_NP=1 makes it a
# 1-rank job: no partner, so a collective measures the code's own cost, apart from how the
# partner's MPI polls (bench-overhead.sh under Open MPI). The size of the
# environment moves the process's initial stack, and that alone changes per-call times by up to
# 4 % here (no preload: 320-333 ns over paddings of 0-256 bytes) -- as much as what is measured.
# So NOISETOOL_BENCH_PAD makes the variables given and it 1024 + BASE bytes whatever they are:
# every mode of a pair gets the same size, and each pair draws a new BASE, so that medians cover
# many layouts instead of one lucky or unlucky one.
bench_equal_env() {
	local base=$1 logs=$2 size=0 args=() pad
	shift 2
	while [ "$1" != -- ]; do
		size=$((size + ${#1} + ${#2} + 2))
		args+=(-genv "$1" "$2")
		shift 2
	done
	shift
	pad=$(printf "%*s" $((1024 + base - size)) "" | tr ' ' x)
	local np=${NT_BENCH_NP:-2}
	timeout 300 mpiexec -n "$np" $(nt_bind "$np") "${args[@]}" -genv NOISETOOL_BENCH_PAD "$pad" \
		-genv NOISETOOL_OUT "$logs" "$@"
}
