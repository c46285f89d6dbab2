#!/usr/bin/env bash
# Outputs through symlinks (doc/noisetool.md, "Outputs"): a link is followed only when it is
# the caller's and leads to a name in its own directory. A link another user planted in a
# world-writable sticky directory, to a root-owned 0600 file or dangling, is refused by every
# output of every command (status 1, one line saying why) and the file stays as it was, or
# is never created; so is a link of the caller's that leads out of its directory. A link of
# the caller's to a file beside it is still written through. The other user's links need root
# (chown -h); without it those cases are skipped and the test ends 77 when nothing failed.
set -u
NT=${1:?usage: test-output-links.sh NOISETOOL MAKE-NTLOG}
MAKE=${2:?}
. "$(dirname "$0")/../lib.sh"
nt_tmpdir
. "$(dirname "$0")/cli-check.sh"
mapfile -t cpus < <(nt_cpus)
cpu=${cpus[0]}
skipped=()

log=$tmp/job.ntlog
"$MAKE" "$log" 2 >/dev/null || { fail "make-ntlog"; summary; exit 1; }

# Every output of every command, each bounded (a regression must not hang the suite): "OPTION
# COMMAND..." with the output path appended after OPTION.
outputs=(
	"--json report $log --no-symbols"
	"--html report $log --no-symbols"
	"--perfetto report $log --no-symbols"
	"--json simulate --ranks 8 --collective barrier --sync --noise freq=1kHz,length=1us"
	"--html simulate --ranks 8 --collective barrier --sync --noise freq=1kHz,length=1us"
	"--save-loggp simulate --calibrate --repetitions 1"
	"--json detour --seconds 0.05 --cpu $cpu"
	"--trace detour --seconds 0.05 --cpu $cpu"
	"--html detour --seconds 0.05 --cpu $cpu"
	"--json ftq --seconds 0.05 --cpu $cpu"
	"--trace ftq --seconds 0.05 --cpu $cpu"
)
# run_output "OPTION COMMAND..." PATH: that output written to PATH, bounded.
run_output() {
	local words
	read -r -a words <<<"$1"
	timeout -k 2 60 "$NT" "${words[@]:1}" "${words[0]}" "$2"
}
echo '{"results": []}' >"$tmp/doc.json"

# refused "OPTION COMMAND..." LINK VICTIM WHY: the output through LINK fails with status 1 and
# one line naming WHY; VICTIM (a file, or a name that must stay free) is as it was.
refused() {
	local spec=$1 link=$2 victim=$3 why=$4 before=""
	[ -e "$victim" ] && before=$(stat -c '%i %a %s %Y' "$victim")
	run_output "$spec" "$link" >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	[ $rc -eq 1 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q "$why" "$tmp/err" && ok ||
		{ fail "$spec through $link: exit $rc, want 1 and one line with '$why'"; cat "$tmp/err"; }
	if [ -n "$before" ]; then
		[ "$(stat -c '%i %a %s %Y' "$victim")" = "$before" ] && cmp -s "$victim" "$tmp/victim.orig" &&
			ok || { fail "$spec through $link changed $victim"; cp "$tmp/victim.orig" "$victim"; }
	else
		[ ! -e "$victim" ] && ok || { fail "$spec through $link created $victim"; rm -f "$victim"; }
	fi
	[ -L "$link" ] && ok || fail "$spec: $link is no longer a symlink"
}

# The victim: root's (the caller's) 0600 file outside the shared directory.
echo "secret" >"$tmp/victim"
chmod 0600 "$tmp/victim"
cp -p "$tmp/victim" "$tmp/victim.orig"

# --- Another user's links in a world-writable sticky directory, as in /tmp.
if [ "$(id -u)" -eq 0 ] && id nobody >/dev/null 2>&1; then
	mkdir -m 1777 "$tmp/shared"
	ln -s ../victim "$tmp/shared/planted"
	ln -s ../created "$tmp/shared/dangling"
	echo "secret" >"$tmp/shared/beside" && chmod 0600 "$tmp/shared/beside"
	ln -s beside "$tmp/shared/planted-beside" # inside its directory, but not ours
	chown -h nobody "$tmp/shared/planted" "$tmp/shared/dangling" "$tmp/shared/planted-beside"
	for spec in "${outputs[@]}"; do
		refused "$spec" "$tmp/shared/planted" "$tmp/victim" "symlink of uid"
		refused "$spec" "$tmp/shared/dangling" "$tmp/created" "symlink of uid"
	done
	cp -p "$tmp/shared/beside" "$tmp/victim.orig"
	refused "--json report $log --no-symbols" "$tmp/shared/planted-beside" "$tmp/shared/beside" "not yours"
	cp -p "$tmp/victim" "$tmp/victim.orig"
	# plot's page, and report's CSV files: one of the six names planted in the directory.
	refused "--html plot detour $tmp/doc.json" "$tmp/shared/planted" "$tmp/victim" "symlink of uid"
	mkdir -m 1777 "$tmp/csv"
	ln -s ../victim "$tmp/csv/sites.csv"
	chown -h nobody "$tmp/csv/sites.csv"
	timeout -k 2 60 "$NT" report "$log" --no-symbols --csv "$tmp/csv" >/dev/null 2>"$tmp/err"
	rc=$?
	[ $rc -eq 1 ] && grep -q "symlink of uid" "$tmp/err" && ok ||
		{ fail "report --csv with a planted sites.csv: exit $rc"; cat "$tmp/err"; }
	cmp -s "$tmp/victim" "$tmp/victim.orig" && [ "$(stat -c %a "$tmp/victim")" = 600 ] && ok ||
		fail "report --csv wrote through a planted link"
	# noisetool run checks its report's outputs before the job: the job never starts.
	libs=$("$NT" version | sed -n 's/^wrapper libraries: //p')
	case "$libs" in
	*MPICH*) run_mpi=mpich ;;
	*"Open MPI"*) run_mpi=openmpi ;;
	*) run_mpi= ;;
	esac
	if [ -n "$run_mpi" ]; then
		for o in --json --perfetto; do
			timeout -k 2 60 "$NT" run --mpi "$run_mpi" $o "$tmp/shared/planted" -- touch "$tmp/ran" \
				>/dev/null 2>"$tmp/err"
			rc=$?
			[ $rc -eq 1 ] && grep -q "symlink of uid" "$tmp/err" && [ ! -e "$tmp/ran" ] && ok ||
				{ fail "run $o PLANTED-LINK: exit $rc, or the job ran"; cat "$tmp/err"; rm -f "$tmp/ran"; }
		done
		cmp -s "$tmp/victim" "$tmp/victim.orig" && ok || fail "run wrote through a planted link"
	else
		skipped+=("no wrapper library in this build: the noisetool run cases were not run")
	fi
	# The CSV directory itself another user's link: refused, nothing written where it leads.
	mkdir "$tmp/elsewhere"
	ln -s ../elsewhere "$tmp/shared/csvdir"
	chown -h nobody "$tmp/shared/csvdir"
	timeout -k 2 60 "$NT" report "$log" --no-symbols --csv "$tmp/shared/csvdir" >/dev/null 2>"$tmp/err"
	rc=$?
	[ $rc -eq 1 ] && grep -q "symlink of uid" "$tmp/err" && ok ||
		{ fail "report --csv PLANTED-DIR-LINK: exit $rc"; cat "$tmp/err"; }
	[ -z "$(ls -A "$tmp/elsewhere")" ] && ok || fail "report --csv wrote into $tmp/elsewhere"
else
	skipped+=("not root (or no user nobody): another user's symlinks were not made")
fi

# --- Links of our own that lead out of their directory: refused too, whoever runs the test.
mkdir "$tmp/own" "$tmp/own/sub"
ln -s ../victim "$tmp/own/up"
ln -s "$tmp/victim" "$tmp/own/absolute"
ln -s sub/new.json "$tmp/own/down"
ln -s ../created "$tmp/own/dangling-up"
for spec in "--json report $log --no-symbols" "--json simulate --ranks 8 --collective barrier --sync --noise freq=1kHz,length=1us" "--trace detour --seconds 0.05 --cpu $cpu"; do
	refused "$spec" "$tmp/own/up" "$tmp/victim" "outside its directory"
	refused "$spec" "$tmp/own/absolute" "$tmp/victim" "outside its directory"
	refused "$spec" "$tmp/own/down" "$tmp/own/sub/new.json" "outside its directory"
	refused "$spec" "$tmp/own/dangling-up" "$tmp/created" "outside its directory"
done

# --- Our own link to a file beside it, and a dangling one: written through as before.
echo old >"$tmp/own/real.json"
chmod 0640 "$tmp/own/real.json"
ln -s real.json "$tmp/own/link.json"
ln -s ./fresh.json "$tmp/own/fresh-link"
timeout -k 2 60 "$NT" report "$log" --no-symbols --json "$tmp/own/link.json" >/dev/null 2>"$tmp/err" &&
	[ -L "$tmp/own/link.json" ] && grep -q '"rank_times"' "$tmp/own/real.json" &&
	[ "$(stat -c %a "$tmp/own/real.json")" = 640 ] && ok || { fail "report --json OWN-LINK"; cat "$tmp/err"; }
timeout -k 2 60 "$NT" simulate --ranks 8 --collective barrier --sync --noise freq=1kHz,length=1us \
	--json "$tmp/own/fresh-link" >/dev/null 2>"$tmp/err" && [ -L "$tmp/own/fresh-link" ] &&
	grep -q '"results"' "$tmp/own/fresh.json" && ok || { fail "simulate --json OWN-DANGLING-LINK"; cat "$tmp/err"; }

ls -A "$tmp" "$tmp/own" "$tmp/own/sub" "$tmp/shared" "$tmp/csv" 2>/dev/null | grep -q '\.tmp\.' &&
	fail "a temporary file was left" || ok

summary || exit 1
if [ ${#skipped[@]} -gt 0 ]; then
	nt_skip "${skipped[@]}"
fi
