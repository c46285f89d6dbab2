#!/usr/bin/env bash
# The user guide's launcher section, tested as written (issue 36): every command of the code
# blocks in doc/noisetool.md's "Launchers" section (up to the next "### " heading) whose launcher
# is the MPI under test's (NT_MPI) is run as the guide prints it, with bash, in a directory of
# its own holding ./app (LOOP, the suite's allreduce loop built with that MPI) and build (the
# build tree: the guide's $PWD/build/wrappers/...), with noisetool on PATH. A block whose first
# line is #! is a batch script, submitted with sbatch from such a directory. Each must exit 0
# and leave exactly one log, complete, of 2 ranks, that noisetool report reads (a batch script:
# also its --json report).
#
# A command's MPI is told by its words: mpich, hydra or pmi2 are MPICH's; openmpi, orterun,
# ompi or pmix Open MPI's. One that names neither fails the test (the guide must say). The srun
# commands and batch scripts run in a private Slurm (tests/slurm/slurm-lib.sh; as root); where
# it cannot start, the others still run, and then the test skips, with the reason.
#
#   test-doc-launchers.sh DOC NOISETOOL LOOP LIB     LIB: the wrapper library of NT_MPI
set -u
DOC=${1:?usage: test-doc-launchers.sh DOC NOISETOOL LOOP LIB}
NT=${2:?}
LOOP=${3:?}
LIB=${4:?}
. "$(dirname "$0")/../lib.sh"
nt_tmpdir
nt_need_mpiexec
nt_need_python "read the guide's code blocks"
nt_need_cpus 2 "the guide's commands start 2 ranks bound one per core"
mpi=${NT_MPI:-mpich}
BUILD=$(cd "$(dirname "$LIB")/.." && pwd)
[ -f "$BUILD/wrappers/$(basename "$LIB")" ] ||
	{ echo "FAIL: $LIB is not in a build tree's wrappers/"; exit 1; }

# The section's commands of this MPI, each in a file: cmd-N (one line) or batch-N (a script).
mkdir "$tmp/cmds"
"$PY" - "$DOC" "$mpi" "$tmp/cmds" <<'PY' || exit 1
import re, sys
doc, mpi, out = sys.argv[1:]
lines = open(doc, encoding="utf-8").read().split("\n")
try:
    start = lines.index("### Launchers")
except ValueError:
    sys.exit(f"FAIL: {doc} has no '### Launchers' section")
end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("### ")), len(lines))
blocks, block = [], None
for line in lines[start:end]:
    if line.startswith("```"):
        if block is None:
            block = []
        else:
            blocks.append(block)
            block = None
    elif block is not None:
        block.append(line)
def which(text):
    if re.search(r"openmpi|orterun|ompi|pmix", text):
        return "ompi"
    if re.search(r"mpich|hydra|pmi2", text):
        return "mpich"
    sys.exit(f"FAIL: the guide's command names no MPI the test can tell: {text!r}")
n = ours = 0
for b in blocks:
    if b and b[0].startswith("#!"):
        items = [("batch", "\n".join(b) + "\n")]
    else:
        items = [("cmd", l.strip() + "\n") for l in b if l.strip() and not l.startswith("#")]
    for kind, text in items:
        n += 1
        if which(text) == mpi:
            ours += 1
            open(f"{out}/{kind}-{n:02d}", "w").write(text)
if not ours:
    sys.exit(f"FAIL: the guide's launcher section has no command for {mpi} ({n} in all)")
print(f"the guide's launcher section: {n} commands, {ours} of them {mpi}'s")
PY

mkdir "$tmp/bin"
ln -s "$(cd "$(dirname "$NT")" && pwd)/$(basename "$NT")" "$tmp/bin/noisetool"
export PATH=$tmp/bin:$PATH
unset NOISETOOL_OUT NOISETOOL_JOB LD_PRELOAD
fail=0

# A directory for command N: ./app and build.
rundir() {
	local d=$tmp/run-$1
	mkdir "$d"
	ln -s "$LOOP" "$d/app"
	ln -s "$BUILD" "$d/build"
	echo "$d"
}

# check NAME DIR: DIR holds exactly one log, complete, of 2 ranks, that noisetool report reads.
check() {
	local name=$1 dir=$2 logs
	mapfile -t logs < <(find "$dir" -name '*.ntlog' 2>/dev/null)
	if [ ${#logs[@]} -ne 1 ]; then
		echo "FAIL: $name: ${#logs[@]} logs, want 1"
		return 1
	fi
	noisetool report --json "$dir/check.json" "${logs[0]}" >/dev/null 2>"$dir/check.err" ||
		{ echo "FAIL: $name: noisetool report:"; cat "$dir/check.err"; return 1; }
	"$PY" - "$dir/check.json" "$name" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
ok = r["ranks"] == 2 and not r["partial"]
print(("ok: " if ok else "FAIL: ") + f"{sys.argv[2]}: {r['ranks']} ranks, partial {r['partial']}")
sys.exit(0 if ok else 1)
PY
}

# run_line FILE: its command, run as the guide prints it in a directory of its own, and checked.
run_line() {
	local text d rc
	text=$(cat "$1")
	d=$(rundir "$(basename "$1")")
	(cd "$d" && timeout -k 10 120 bash -c "$text" </dev/null >"$d/out" 2>"$d/err")
	rc=$?
	if [ $rc -ne 0 ]; then
		echo "FAIL: '$text': exit $rc"
		cat "$d/err"
		return 1
	fi
	check "$text" "$d"
}

slurm_cmds=()
for f in "$tmp"/cmds/*; do
	text=$(cat "$f")
	case "$(basename "$f")" in
	batch-*) slurm_cmds+=("$f"); continue ;;
	esac
	case " $text" in
	*" srun "*) slurm_cmds+=("$f"); continue ;;
	esac
	run_line "$f" || fail=1
done
[ $fail = 0 ] || exit 1
[ ${#slurm_cmds[@]} = 0 ] && exit 0

# The srun commands and batch scripts, in the private Slurm (which skips, with its reason,
# where it cannot start: the commands above passed).
. "$(dirname "$0")/../slurm/slurm-lib.sh"
nt_slurm_start
for f in "${slurm_cmds[@]}"; do
	case "$(basename "$f")" in
	batch-*)
		d=$(rundir "$(basename "$f")")
		name="the batch script ($(tail -n 1 "$f"))"
		cp "$f" "$d/job.sh"
		job=$(cd "$d" && sbatch --parsable -o "$d/slurm.out" job.sh) ||
			{ echo "FAIL: sbatch of $name"; nt_slurm_logs; fail=1; continue; }
		for _ in $(seq 1200); do
			[ -z "$(squeue -h -j "$job" 2>/dev/null)" ] && break
			sleep 0.1
		done
		if [ -n "$(squeue -h -j "$job" 2>/dev/null)" ]; then
			echo "FAIL: $name: still queued or running after 120 s"
			scancel "$job"
			fail=1
			continue
		fi
		check "$name" "$d" || { cat "$d/slurm.out"; fail=1; continue; }
		[ -s "$d/logs/report.json" ] ||
			{ echo "FAIL: $name: no logs/report.json"; cat "$d/slurm.out"; fail=1; }
		;;
	*) run_line "$f" || { nt_slurm_logs; fail=1; } ;;
	esac
done
exit $fail
